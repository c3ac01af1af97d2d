import Synchronization

/// The worker's two-step stop: *stopping* (graceful: take no new work, finish what runs) and
/// *aborted* (the graceful bound passed or the task was cancelled: give up what still waits).
///
/// Handlers registered with ``onStop(_:)`` run once when stopping begins (or at once if it has).
/// ``sleep(for:)`` is the worker's only way to wait: it wakes early when stopping begins.
/// Thread-safe; share one instance.
final class StopSignal: Sendable {
    private struct State {
        var stopping = false
        var aborted = false
        var handlers: [UInt64: @Sendable () -> Void] = [:]
        var nextHandler: UInt64 = 0
    }

    private let state = Mutex(State())

    var isStopping: Bool { state.withLock { $0.stopping } }
    var isAborted: Bool { state.withLock { $0.aborted } }

    /// Begins a graceful stop; runs the handlers once. Idempotent.
    func stop() {
        let handlers: [@Sendable () -> Void] = state.withLock { state in
            guard !state.stopping else { return [] }
            state.stopping = true
            defer { state.handlers.removeAll() }
            return Array(state.handlers.values)
        }
        for handler in handlers { handler() }
    }

    /// Gives up on waiting work (implies ``stop()``).
    func abort() {
        stop()
        state.withLock { $0.aborted = true }
    }

    /// Runs `handler` when stopping begins (now, if it has). Returns a token for ``remove(_:)``.
    @discardableResult
    func onStop(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
        let token: UInt64? = state.withLock { state in
            guard !state.stopping else { return nil }
            state.nextHandler += 1
            state.handlers[state.nextHandler] = handler
            return state.nextHandler
        }
        if token == nil { handler() }
        return token
    }

    func remove(_ token: UInt64?) {
        guard let token else { return }
        state.withLock { _ = $0.handlers.removeValue(forKey: token) }
    }

    /// Sleeps for `duration`, in slices of at most 50 ms, and returns early (false) when
    /// `until` says so (by default: when stopping begins) or the task is cancelled. True when
    /// the whole duration passed.
    func sleep(for duration: Duration, until giveUp: (StopSignal) -> Bool = { $0.isStopping }) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + duration
        while clock.now < deadline {
            if giveUp(self) || Task.isCancelled { return false }
            let slice = min(deadline - clock.now, .milliseconds(50))
            do { try await Task.sleep(for: slice) } catch { return false }
        }
        return !giveUp(self) && !Task.isCancelled
    }
}
