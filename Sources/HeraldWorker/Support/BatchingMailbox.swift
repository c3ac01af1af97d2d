import Synchronization

/// Many producers, one consumer that takes everything posted since its last take at once: what
/// turns a stream of items into batches, so that the consumer's costs are per batch. Posting is a
/// short lock and, only when the consumer waits, one resumption. Thread-safe.
///
/// The engine's events go through one (``EngineMailbox``), and so do the messages between a
/// broker consumer and the intake (``MessageInbox``).
final class BatchingMailbox<Item: Sendable>: Sendable {
    /// Open; ended by its producer (what is buffered is still taken, unless it ended with an
    /// error: then nothing more is); or closed by its consumer's side (nothing more is taken),
    /// keeping the producer's error if it ended with one.
    private enum Phase {
        case open
        case ended((any Error)?)
        case closed((any Error)?)
    }

    private struct State {
        var items: [Item] = []
        var waiter: CheckedContinuation<Void, Never>?
        var phase = Phase.open

        /// Whether a take returns nil now, whatever is buffered.
        var isDone: Bool {
            switch phase {
            case .open, .ended(nil): false
            case .ended, .closed: true
            }
        }

        var hasEnded: Bool {
            if case .open = phase { false } else { true }
        }
    }

    private let state = Mutex(State())

    /// What a take finds.
    private enum Step {
        case items([Item])
        case done
        case wait
    }

    func post(_ item: Item) {
        let waiter = state.withLock { state in
            state.items.append(item)
            return state.waiter.take()
        }
        waiter?.resume()
    }

    func post(contentsOf items: [Item]) {
        guard !items.isEmpty else { return }
        let waiter = state.withLock { state in
            state.items.append(contentsOf: items)
            return state.waiter.take()
        }
        waiter?.resume()
    }

    /// The producer is done; `error` nil for a normal end (what is buffered is still taken).
    func end(error: (any Error)?) {
        wake { phase in
            switch phase {
            case .open, .ended: .ended(error)
            case .closed(let earlier): .closed(earlier ?? error)
            }
        }
    }

    /// Nothing more is taken (the worker is stopping); buffered items stay unsettled.
    func close() {
        wake { phase in
            switch phase {
            case .open: .closed(nil)
            case .ended(let error), .closed(let error): .closed(error)
            }
        }
    }

    /// Why the producer ended, once it has with an error.
    var endError: (any Error)? {
        state.withLock { state in
            switch state.phase {
            case .open: nil
            case .ended(let error), .closed(let error): error
            }
        }
    }

    /// Up to `max` of what is buffered (at least one), waiting for the first; nil once closed,
    /// ended with an error (what is buffered is dropped), or ended with nothing left. Cancelling
    /// the waiting task closes the mailbox.
    func take(max: Int = .max) async -> [Item]? {
        await withTaskCancellationHandler {
            while true {
                let step: Step = state.withLock { state in
                    if state.isDone { return .done }
                    if !state.items.isEmpty {
                        if state.items.count <= max {
                            var taken: [Item] = []
                            swap(&taken, &state.items)
                            return .items(taken)
                        }
                        let items = Array(state.items.prefix(max))
                        state.items.removeFirst(max)
                        return .items(items)
                    }
                    return state.hasEnded ? .done : .wait
                }
                switch step {
                case .items(let items): return items
                case .done: return nil
                case .wait:
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let resumeNow = state.withLock { state in
                            if state.hasEnded || !state.items.isEmpty { return true }
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

    /// Moves to the phase `next` gives, and wakes the consumer.
    private func wake(_ next: (Phase) -> Phase) {
        let waiter = state.withLock { state in
            state.phase = next(state.phase)
            return state.waiter.take()
        }
        waiter?.resume()
    }
}
