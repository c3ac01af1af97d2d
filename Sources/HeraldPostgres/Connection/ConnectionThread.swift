import Dispatch
import Foundation
import Logging
import Synchronization

/// A dedicated OS thread that owns one ``LibPQSession`` and runs jobs for it one at a time,
/// in submission order (a serial executor). Every blocking libpq call of that session happens
/// here, never on Swift's cooperative pool.
///
/// Jobs are queued under a `Mutex`; a semaphore wakes the thread. On stop, jobs already
/// queued still run, then the session is destroyed (closing its handle once) and the thread
/// exits. The thread holds this object, not the ``PostgresConnection`` that owns it, so the
/// connection's `deinit` can stop it.
final class ConnectionThread: Sendable {
    typealias Job = @Sendable (LibPQSession) -> Void

    private struct State {
        var jobs: [Job] = []
        var stopping = false
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)

    /// Starts the thread (see ``NamedThread``). The session is created on it, from these
    /// values.
    init(configuration: PostgresConfiguration, logger: Logger, label: String, applicationNameSuffix: String? = nil) {
        NamedThread.start { [self] in
            let session = LibPQSession(
                configuration: configuration, logger: logger, label: label, applicationNameSuffix: applicationNameSuffix
            )
            self.runLoop(session)
        }
    }

    /// Queues `job`; returns false (without running it) once the thread is stopping.
    @discardableResult
    func submit(_ job: @escaping Job) -> Bool {
        let accepted = state.withLock { state in
            guard !state.stopping else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { wakeup.signal() }
        return accepted
    }

    /// Asks the thread to finish the queued jobs and exit; does not wait.
    func requestStop() {
        let changed = state.withLock { state in
            guard !state.stopping else { return false }
            state.stopping = true
            return true
        }
        if changed { wakeup.signal() }
    }

    /// Stops the thread and waits until it has closed its connection and exited.
    func stop() async {
        requestStop()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyExited = state.withLock { state in
                if state.exited { return true }
                state.exitWaiters.append(continuation)
                return false
            }
            if alreadyExited { continuation.resume() }
        }
    }

    private func runLoop(_ session: LibPQSession) {
        while true {
            wakeup.wait()
            let (batch, stopping) = state.withLock { state in
                let batch = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                return (batch, state.stopping)
            }
            for job in batch { job(session) }
            // `submit` refuses jobs once `stopping` is set, so this batch was the last one.
            if stopping { break }
        }
        session.disconnect()
        let waiters = state.withLock { state in
            state.exited = true
            let waiters = state.exitWaiters
            state.exitWaiters.removeAll()
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
