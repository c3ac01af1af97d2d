import Synchronization

/// Bounds the requests a sender has in flight: ``acquire()`` waits (FIFO) while all permits are
/// taken, so a busy provider slows the worker down instead of queueing without limit.
///
/// It starts with ``warmUpPermits`` (1 by default) and opens to its full ``limit`` at the first
/// ``open()``, which senders call when the first response arrives: a fresh HTTP/2 connection
/// learns the server's stream limit only from its SETTINGS frame, and libcurl 7.88 would
/// otherwise burst past it.
///
/// Thread rules: `Sendable`; any task may acquire and release.
final class InFlightGate: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var capacity: Int
        var inUse = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var isOpen = false
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
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Returns a permit taken by a successful ``acquire()``.
    func release() {
        let next: Waiter? = state.withLock { state in
            if !state.waiters.isEmpty, state.inUse <= state.capacity {
                return state.waiters.removeFirst()
            }
            state.inUse -= 1
            return nil
        }
        next?.continuation.resume(returning: true)
    }

    /// Raises the capacity from the warm-up permits to ``limit`` (once; later calls do nothing).
    func open() {
        let woken: [Waiter] = state.withLock { state in
            guard !state.isOpen else { return [] }
            state.isOpen = true
            state.capacity = limit
            var woken: [Waiter] = []
            while state.inUse < state.capacity, !state.waiters.isEmpty {
                state.inUse += 1
                woken.append(state.waiters.removeFirst())
            }
            return woken
        }
        for waiter in woken { waiter.continuation.resume(returning: true) }
    }
}
