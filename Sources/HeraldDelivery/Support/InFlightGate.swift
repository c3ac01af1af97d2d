import DequeModule
import Synchronization

/// Bounds the requests a sender has in flight: work that finds every permit taken waits (FIFO)
/// until one is released, so a busy provider slows the worker down instead of piling requests
/// into the HTTP client.
///
/// It starts with ``warmUpPermits`` (1 by default) and opens to its full ``limit`` at the first
/// ``open()``, which senders call when the first response arrives: a fresh HTTP/2 connection
/// learns the server's stream limit only from its SETTINGS frame, and libcurl 7.88 would
/// otherwise burst past it.
///
/// Two ways in: ``acquire(_:)`` runs a closure once it holds a permit, without a task (the
/// senders' batch path: the closure starts the request); ``acquire()`` suspends the calling
/// task (``PushSender/send(_:)``). A permit freed by ``release()`` goes straight to the first
/// waiter. Closures run outside the lock and never nest: one that releases a permit at once
/// (a request refused before it was queued) hands the next waiter to the loop already running,
/// so a long queue cannot deepen the stack.
///
/// Thread rules: `Sendable`; any thread or task may acquire and release.
final class InFlightGate: Sendable {
    private struct Waiter {
        let id: UInt64
        /// Runs with the permit (true), or without one when an async waiter was cancelled.
        let resume: @Sendable (Bool) -> Void
    }

    private struct State {
        var capacity: Int
        var inUse = 0
        var waiters = Deque<Waiter>()
        /// Waiters that hold a permit and are about to run.
        var ready = Deque<Waiter>()
        /// A thread is running the ready waiters.
        var running = false
        var nextID: UInt64 = 0
        var isOpen = false

        /// Hands free permits to waiters, first come first served.
        mutating func grant() {
            while inUse < capacity, let waiter = waiters.popFirst() {
                inUse += 1
                ready.append(waiter)
            }
        }

        /// Whether the caller must run the ready waiters (nobody else is).
        mutating func claimRun() -> Bool {
            guard !ready.isEmpty, !running else { return false }
            running = true
            return true
        }
    }

    let limit: Int
    private let state: Mutex<State>

    init(limit: Int, warmUpPermits: Int = 1) {
        self.limit = max(1, limit)
        self.state = Mutex(State(capacity: min(max(1, warmUpPermits), max(1, limit))))
    }

    /// Permits in use now.
    var inUse: Int { state.withLock { $0.inUse } }
    /// Callers waiting for a permit now.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Runs `body` once it holds a permit: at once on this thread when one is free, otherwise
    /// on the thread whose ``release()`` frees one. `body` must lead to exactly one
    /// ``release()``.
    func acquire(_ body: @escaping @Sendable () -> Void) {
        let run = state.withLock { state -> Bool in
            state.nextID += 1
            state.waiters.append(Waiter(id: state.nextID) { _ in body() })
            state.grant()
            return state.claimRun()
        }
        if run { runReady() }
    }

    /// Takes a permit, waiting for one if needed. Returns false (without a permit) when the task
    /// is cancelled while waiting.
    func acquire() async -> Bool {
        let id: UInt64? = state.withLock { state in
            if state.inUse < state.capacity, state.waiters.isEmpty {
                state.inUse += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let resumeNow: Bool? = state.withLock { state in
                    if Task.isCancelled { return false }
                    if state.inUse < state.capacity, state.waiters.isEmpty {
                        state.inUse += 1
                        return true
                    }
                    state.waiters.append(Waiter(id: id) { continuation.resume(returning: $0) })
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.resume(false)
        }
    }

    /// Returns a permit: the first waiter, if any, runs with it.
    func release() {
        let run = state.withLock { state -> Bool in
            state.inUse -= 1
            state.grant()
            return state.claimRun()
        }
        if run { runReady() }
    }

    /// Raises the capacity from the warm-up permits to ``limit`` (once; later calls do nothing).
    func open() {
        let run = state.withLock { state -> Bool in
            guard !state.isOpen else { return false }
            state.isOpen = true
            state.capacity = limit
            state.grant()
            return state.claimRun()
        }
        if run { runReady() }
    }

    /// Runs ready waiters until none is left; waiters readied meanwhile (by this thread's
    /// closures or by others) are run here too.
    private func runReady() {
        while let waiter = state.withLock({ state -> Waiter? in
            if let waiter = state.ready.popFirst() { return waiter }
            state.running = false
            return nil
        }) {
            waiter.resume(true)
        }
    }
}
