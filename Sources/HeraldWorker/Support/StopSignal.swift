import Synchronization

/// The worker's two-step stop: *stopping* (graceful: take no new work, finish what runs) and
/// *aborted* (the graceful bound passed or the task was cancelled: give up what still waits).
///
/// Handlers registered with ``onStop(_:)`` run once when stopping begins (or at once if it has).
/// ``sleep(for:until:)`` is the worker's only way to wait: it wakes as soon as the stop reaches
/// the phase it names, without polling. Thread-safe; share one instance.
final class StopSignal: Sendable {
    /// How far the stop has gone; it only moves forward.
    enum Phase: Int, Comparable, Sendable {
        case running, stopping, aborted

        static func < (lhs: Phase, rhs: Phase) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    private struct State {
        var phase = Phase.running
        /// Run once the phase reaches theirs.
        var handlers: [UInt64: (phase: Phase, run: @Sendable () -> Void)] = [:]
        var nextHandler: UInt64 = 0
    }

    private let state = Mutex(State())

    var phase: Phase { state.withLock { $0.phase } }
    var isStopping: Bool { phase >= .stopping }
    var isAborted: Bool { phase == .aborted }

    /// Begins a graceful stop; runs the handlers once. Idempotent.
    func stop() { advance(to: .stopping) }

    /// Gives up on waiting work (implies ``stop()``).
    func abort() { advance(to: .aborted) }

    /// Runs `handler` when stopping begins (now, if it has). Returns a token for ``remove(_:)``.
    @discardableResult
    func onStop(_ handler: @escaping @Sendable () -> Void) -> UInt64? { on(.stopping, handler) }

    func remove(_ token: UInt64?) {
        guard let token else { return }
        state.withLock { _ = $0.handlers.removeValue(forKey: token) }
    }

    /// Sleeps for `duration`; returns early (false) once the stop reaches `phase` (by default:
    /// when stopping begins) or the task is cancelled. True when the whole duration passed.
    func sleep(for duration: Duration, until phase: Phase = .stopping) async -> Bool {
        guard self.phase < phase else { return false }
        let sleeper = Task { try await Task.sleep(for: duration) }
        let token = on(phase) { sleeper.cancel() }
        defer { remove(token) }
        let slept = await withTaskCancellationHandler {
            (try? await sleeper.value) != nil
        } onCancel: {
            sleeper.cancel()
        }
        return slept && self.phase < phase && !Task.isCancelled
    }

    /// Runs `handler` once the stop reaches `phase` (now, if it has). Returns a token for
    /// ``remove(_:)``.
    @discardableResult
    func on(_ phase: Phase, _ handler: @escaping @Sendable () -> Void) -> UInt64? {
        let token: UInt64? = state.withLock { state in
            guard state.phase < phase else { return nil }
            state.nextHandler += 1
            state.handlers[state.nextHandler] = (phase, handler)
            return state.nextHandler
        }
        if token == nil { handler() }
        return token
    }

    private func advance(to phase: Phase) {
        let due: [@Sendable () -> Void] = state.withLock { state in
            guard state.phase < phase else { return [] }
            state.phase = phase
            let due = state.handlers.filter { $0.value.phase <= phase }
            for key in due.keys { state.handlers.removeValue(forKey: key) }
            return due.sorted { $0.key < $1.key }.map(\.value.run)
        }
        for handler in due { handler() }
    }
}
