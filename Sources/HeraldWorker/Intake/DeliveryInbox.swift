import Synchronization

/// The buffer between the consumer (filled by the pump task that iterates it) and the intake,
/// which takes everything buffered at once, up to a chunk size: that is what turns a stream of
/// messages into batches for the store. Bounded by the prefetch (the broker sends no more
/// until messages are settled). Thread-safe.
final class DeliveryInbox: Sendable {
    typealias Item = TrackedMessage

    private struct State {
        var items: [Item] = []
        var waiter: CheckedContinuation<Void, Never>?
        /// The consumer ended (normally, or with `error`).
        var ended = false
        var error: (any Error)?
        /// The intake stops taking (stopping): buffered items stay unsettled.
        var closed = false
    }

    private let state = Mutex(State())

    func put(_ items: [Item]) {
        guard !items.isEmpty else { return }
        let waiter = state.withLock { state in
            state.items.append(contentsOf: items)
            return state.waiter.take()
        }
        waiter?.resume()
    }

    /// The consumer sequence ended; `error` is nil for a normal end (cancelled consumer).
    func end(error: (any Error)?) {
        let waiter = state.withLock { state in
            state.ended = true
            state.error = error
            return state.waiter.take()
        }
        waiter?.resume()
    }

    /// Stops handing out items (the worker is stopping).
    func close() {
        let waiter = state.withLock { state in
            state.closed = true
            return state.waiter.take()
        }
        waiter?.resume()
    }

    /// Why the consumer ended, once it has.
    var endError: (any Error)? { state.withLock { $0.error } }

    /// Everything buffered (at least one item, at most `max`), waiting for the first; nil once
    /// closed, ended with an error (what is buffered is dropped), or ended with nothing left.
    func take(max: Int) async -> [Item]? {
        await withTaskCancellationHandler {
            while true {
                enum Step { case items([Item]), done, wait }
                let step: Step = state.withLock { state in
                    // After a consumer error the connection is gone and the broker requeues
                    // what is buffered (perhaps to another process): never start on it here.
                    if state.closed || (state.ended && state.error != nil) { return .done }
                    if !state.items.isEmpty {
                        let count = min(max, state.items.count)
                        let items = Array(state.items.prefix(count))
                        state.items.removeFirst(count)
                        return .items(items)
                    }
                    return state.ended ? .done : .wait
                }
                switch step {
                case .items(let items): return items
                case .done: return nil
                case .wait:
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let resumeNow = state.withLock { state in
                            if state.closed || state.ended || !state.items.isEmpty { return true }
                            state.waiter = continuation
                            return false
                        }
                        if resumeNow { continuation.resume() }
                    }
                }
            }
        } onCancel: {
            close()
        }
    }
}
