import Synchronization

/// Wakes the tasks waiting for the worker's shared state to change (the messages a handover waits
/// for settled, the deliveries a stop waits for answered), so that they wait without polling.
/// Whoever changes that state calls ``changed()``: one atomic load when nobody waits, which is
/// nearly always.
final class ChangeSignal: Sendable {
    /// How a ``wait(for:until:stop:phase:)`` ended.
    enum WaitResult: Equatable, Sendable {
        case satisfied
        case timedOut
        /// The stop reached the phase named, or the task was cancelled.
        case stopped
    }

    private struct State {
        /// Counts the changes: a waiter that saw one generation and finds another does not sleep.
        var generation: UInt64 = 0
        var sleepers: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextSleeper: UInt64 = 0
    }

    private let waiting = Atomic<Int>(0)
    private let state = Mutex(State())

    /// The state may have changed: every waiter checks its condition again.
    func changed() {
        guard waiting.load(ordering: .sequentiallyConsistent) > 0 else { return }
        let sleepers = state.withLock { state in
            state.generation &+= 1
            defer { state.sleepers.removeAll() }
            return Array(state.sleepers.values)
        }
        for sleeper in sleepers { sleeper.resume() }
    }

    /// Waits until `condition` holds (checked now and after each change), at most until
    /// `deadline`, and no longer once `stop` reaches `phase` or the task is cancelled.
    func wait(
        for condition: () -> Bool, until deadline: ContinuousClock.Instant, stop: StopSignal, phase: StopSignal.Phase = .stopping
    ) async -> WaitResult {
        // Counted before the condition is read: a change made after this reaches `changed()`'s
        // wake-up, one made before is seen by the condition, provided the condition reads its
        // state under the lock the changer wrote it with, or from a sequentially consistent
        // atomic (a relaxed one could miss it).
        waiting.add(1, ordering: .sequentiallyConsistent)
        defer { waiting.subtract(1, ordering: .sequentiallyConsistent) }
        let timer = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            self?.changed()
        }
        defer { timer.cancel() }
        let token = stop.on(phase) { [weak self] in self?.changed() }
        defer { stop.remove(token) }
        return await withTaskCancellationHandler {
            while true {
                let seen = state.withLock { $0.generation }
                if condition() { return .satisfied }
                if stop.phase >= phase || Task.isCancelled { return .stopped }
                if ContinuousClock.now >= deadline { return .timedOut }
                await withCheckedContinuation { (sleeper: CheckedContinuation<Void, Never>) in
                    let changedMeanwhile = state.withLock { state in
                        guard state.generation == seen else { return true }
                        state.nextSleeper += 1
                        state.sleepers[state.nextSleeper] = sleeper
                        return false
                    }
                    if changedMeanwhile { sleeper.resume() }
                }
            }
        } onCancel: {
            self.changed()
        }
    }
}
