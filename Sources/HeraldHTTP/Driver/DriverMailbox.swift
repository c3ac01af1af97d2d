internal import CCurl
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The only state shared between callers and the driver thread, all of it behind one lock:
/// requests to start, requests to cancel, the shutdown request and who waits for it.
///
/// Callers post and wake the driver with `curl_multi_wakeup` (documented as callable from any
/// thread). The multi handle pointer is kept here only for that call, and only until the driver
/// calls ``close()`` right before `curl_multi_cleanup`: every wakeup happens under the lock
/// while the pointer is non-nil, so none can reach a freed handle.
final class DriverMailbox: Sendable {
    struct Batch {
        var submissions: [PendingRequest] = []
        var cancellations: [UInt64] = []
        var shutdownRequested = false
    }

    private struct State {
        var submissions: [PendingRequest] = []
        var cancellations: [UInt64] = []
        /// A wakeup was sent since the driver last took the mailbox: no need for another.
        var wakeupSent = false
        var shutdownRequested = false
        var finished = false
        var multi: WakeupHandle?
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        /// The driver thread (`pthread_self`), once it runs: what it posts needs no wakeup, it
        /// looks at the mailbox again before it sleeps.
        var driverThread: pthread_t?

        mutating func wake() {
            guard !wakeupSent, let multi else { return }
            if let driverThread, pthread_equal(driverThread, pthread_self()) != 0 { return }
            wakeupSent = true
            _ = curl_multi_wakeup(multi.raw)
        }
    }

    private let state: Mutex<State>

    init(multi: UnsafeMutableRawPointer) {
        state = Mutex(State(multi: WakeupHandle(raw: multi)))
    }

    /// Driver: called once on its thread before the first turn.
    func driverThreadStarted() {
        state.withLock { $0.driverThread = pthread_self() }
    }

    /// Driver: whether anything was posted since the last ``take()`` (then it must not sleep).
    var hasWork: Bool {
        state.withLock { !$0.submissions.isEmpty || !$0.cancellations.isEmpty || $0.shutdownRequested }
    }

    /// Queues a request for the driver. Returns false once shutdown has been requested.
    func submit(_ request: PendingRequest) -> Bool {
        state.withLock { state in
            guard !state.shutdownRequested else { return false }
            state.submissions.append(request)
            state.wake()
            return true
        }
    }

    /// Asks the driver to take the request's handle out of libcurl (its caller has already
    /// been resumed with `CancellationError`).
    func cancel(_ id: UInt64) {
        state.withLock { state in
            guard !state.shutdownRequested else { return }
            state.cancellations.append(id)
            state.wake()
        }
    }

    /// Asks the driver to stop; `waiter`, if given, is resumed once it has stopped.
    func requestShutdown(waiter: CheckedContinuation<Void, Never>?) {
        let resumeNow = state.withLock { state -> Bool in
            if state.finished { return true }
            if let waiter { state.shutdownWaiters.append(waiter) }
            if !state.shutdownRequested {
                state.shutdownRequested = true
                state.wakeupSent = false
                state.wake()
            }
            return false
        }
        if resumeNow { waiter?.resume() }
    }

    /// Driver: takes everything posted since the last call.
    func take() -> Batch {
        state.withLock { state in
            state.wakeupSent = false
            defer {
                state.submissions.removeAll(keepingCapacity: true)
                state.cancellations.removeAll(keepingCapacity: true)
            }
            return Batch(
                submissions: state.submissions,
                cancellations: state.cancellations,
                shutdownRequested: state.shutdownRequested
            )
        }
    }

    /// Driver, stopping: forget the multi handle before it is freed; returns submissions that
    /// were never taken.
    func close() -> [PendingRequest] {
        state.withLock { state in
            state.multi = nil
            defer { state.submissions.removeAll() }
            return state.submissions
        }
    }

    /// Driver, stopped: resumes everyone waiting in `shutdown()`.
    func markFinished() {
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.shutdownWaiters.removeAll() }
            return state.shutdownWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// The multi handle, for `curl_multi_wakeup` only.
///
/// `@unchecked Sendable` is sound because libcurl documents `curl_multi_wakeup` as safe to call
/// from any thread, it is the only call made through this pointer, and every call happens under
/// the mailbox lock while the pointer is still set (the driver clears it, under the same lock,
/// before `curl_multi_cleanup`).
struct WakeupHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
}
