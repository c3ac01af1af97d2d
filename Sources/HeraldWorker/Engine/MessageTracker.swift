import Synchronization

/// Which AMQP message waits for which deliveries: the rule "acknowledge a message only when
/// every delivery it produced is terminal and recorded" lives here.
///
/// A message is registered when it arrives, gets its deliveries attached at fan-out, and is
/// sealed then; it is ready to acknowledge once sealed with no delivery left. A delivery already
/// in flight here (the same message redelivered after a reconnect, or a copy published twice)
/// is *joined* instead of started again: the second message then waits for the same delivery.
/// The claim stage *pins* a delivery it is about to join (between deciding and attaching, the
/// journal is asked for positions), so that the engine does not drop it meanwhile as orphaned.
///
/// Thread-safe (a `Mutex`); every method is one short critical section over a whole batch. The
/// caller acknowledges the messages it gets back, outside the lock.
final class MessageTracker: Sendable {
    private struct State {
        var messages: [ObjectIdentifier: TrackedMessage] = [:]
        var inFlight: [JoinKey: Delivery] = [:]
        var pins: [JoinKey: Int] = [:]
        /// Messages not settled, per connection session and queue (``unsettledCount(session:queue:)``).
        var unsettled: [Source: Int] = [:]
    }

    /// Where messages came from: a connection session's queue.
    private struct Source: Hashable {
        let session: UInt64
        let queue: String

        init(_ message: TrackedMessage) {
            session = message.session
            queue = message.queue
        }

        init(session: UInt64, queue: String) {
            self.session = session
            self.queue = queue
        }
    }

    /// One delivery of a message at fan-out.
    enum Attachment {
        /// A delivery to start.
        case start(Delivery)
        /// The same delivery is in flight here (pinned by ``pinIfInFlight(_:)``): wait for it.
        case join(JoinKey)
    }

    private let state = Mutex(State())
    /// Signalled when messages settle or are forgotten (and by the engine after each turn): what
    /// a handover or a stop waits for, without polling.
    let changes = ChangeSignal()

    /// Messages received and not yet settled.
    var messageCount: Int { state.withLock { $0.messages.count } }
    /// Deliveries started (or joined) and not yet finished or dropped.
    var deliveryCount: Int { state.withLock { $0.inFlight.count } }

    func register(_ messages: [TrackedMessage]) {
        state.withLock { state in
            for message in messages where state.messages.updateValue(message, forKey: ObjectIdentifier(message)) == nil {
                state.unsettled[Source(message), default: 0] += 1
            }
        }
    }

    /// Pins the delivery `key` if it is in flight (see the type's documentation); true if it is.
    func pinIfInFlight(_ key: JoinKey) -> Bool {
        state.withLock { state in
            guard state.inFlight[key] != nil else { return false }
            state.pins[key, default: 0] += 1
            return true
        }
    }

    /// Fan-out of messages, in order: attaches each message to its deliveries (starting new ones,
    /// joining pinned ones, unpinning them) and seals it. Returns the deliveries to start, in
    /// order, and the messages already settled (nothing left to wait for: acknowledge them).
    /// A forgotten message (its connection was lost meanwhile) attaches nothing.
    func fanOut(_ messages: [(TrackedMessage, [Attachment])]) -> (started: [Delivery], settled: [TrackedMessage]) {
        let result: (started: [Delivery], settled: [TrackedMessage]) = state.withLock { state in
            var started: [Delivery] = []
            var settled: [TrackedMessage] = []
            for (message, attachments) in messages {
                for attachment in attachments {
                    switch attachment {
                    case .start(let delivery):
                        guard message.phase != .forgotten else { continue }
                        // Registered and tested in one lookup (the running one put back: rare).
                        if let running = state.inFlight.updateValue(delivery, forKey: delivery.joinKey) {
                            state.inFlight[delivery.joinKey] = running
                            running.waiters.append(message)
                        } else {
                            delivery.waiters.append(message)
                            started.append(delivery)
                        }
                        message.remaining += 1
                    case .join(let key):
                        if let pins = state.pins[key] { state.pins[key] = pins > 1 ? pins - 1 : nil }
                        // Gone: it finished (a pinned delivery is never dropped) and is recorded.
                        guard message.phase != .forgotten, let running = state.inFlight[key] else { continue }
                        running.waiters.append(message)
                        message.remaining += 1
                    }
                }
                if message.phase == .attaching { message.phase = .sealed }
                if message.remaining == 0, Self.settle(message, in: &state) { settled.append(message) }
            }
            return (started, settled)
        }
        if !result.settled.isEmpty { changes.changed() }
        return result
    }

    /// Settles a message that makes no delivery (dead-lettered, a repeat, no recipient); false
    /// when it must not be acknowledged (its connection was lost).
    func settle(_ message: TrackedMessage) -> Bool {
        let settled = state.withLock { state in Self.settle(message, in: &state) }
        if settled { changes.changed() }
        return settled
    }

    /// Deliveries terminal and recorded: returns the messages that have nothing left to wait for.
    func finish(_ deliveries: [Delivery]) -> [TrackedMessage] {
        let settled = state.withLock { state in
            var settled: [TrackedMessage] = []
            for delivery in deliveries {
                // Removed and tested in one lookup (another one put back: rare).
                guard let running = state.inFlight.removeValue(forKey: delivery.joinKey) else { continue }
                guard running === delivery else {
                    state.inFlight[delivery.joinKey] = running
                    continue
                }
                for message in delivery.waiters {
                    message.remaining -= 1
                    if message.remaining == 0 && message.phase == .sealed && Self.settle(message, in: &state) { settled.append(message) }
                }
                delivery.waiters.removeAll()
            }
            return settled
        }
        if !settled.isEmpty { changes.changed() }
        return settled
    }

    /// Deliveries deferred until `until` (their provider's circuit breaker is open): their
    /// messages are republished to the wait queue once settled (the latest instant wins).
    func markDeferred(_ deliveries: [Delivery], until: ContinuousClock.Instant) {
        state.withLock { _ in
            for delivery in deliveries {
                for message in delivery.waiters where message.deferredUntil.map({ $0 < until }) ?? true {
                    message.deferredUntil = until
                }
            }
        }
    }

    /// Whether a live message still waits for each delivery (or a joiner is on its way), under
    /// one lock: false once every message that wanted it belonged to a lost connection. The
    /// broker has requeued those, perhaps to another process, so sending it now could send twice
    /// or out of order.
    func areAwaited(_ deliveries: [Delivery]) -> [Bool] {
        state.withLock { state in
            deliveries.map { delivery in
                (!state.pins.isEmpty && state.pins[delivery.joinKey] != nil) || delivery.waiters.contains { $0.phase != .forgotten }
            }
        }
    }

    /// Deliveries that will not finish here (stopping, or orphaned): their messages stay
    /// unsettled, and the broker delivers them again.
    func drop(_ deliveries: [Delivery]) {
        state.withLock { state in
            for delivery in deliveries where state.inFlight[delivery.joinKey] === delivery {
                state.inFlight[delivery.joinKey] = nil
            }
        }
    }

    /// Messages of connection session `session` received from `queue` and not yet settled.
    func unsettledCount(session: UInt64, queue: String) -> Int {
        state.withLock { state in state.unsettled[Source(session: session, queue: queue)] ?? 0 }
    }

    /// Forgets the unsettled messages of a lost connection session (the broker requeues them),
    /// or only those it received from `queue` (its channel is being closed); returns how many.
    func forgetSession(_ session: UInt64, queue: String? = nil) -> Int {
        let forgotten = state.withLock { state in
            let lost = state.messages.values.filter { $0.session == session && (queue == nil || $0.queue == queue) }
            for message in lost {
                message.phase = .forgotten
                Self.remove(message, from: &state)
            }
            return lost.count
        }
        if forgotten > 0 { changes.changed() }
        return forgotten
    }

    private static func settle(_ message: TrackedMessage, in state: inout State) -> Bool {
        switch message.phase {
        case .attaching, .sealed: message.phase = .settled
        case .settled, .forgotten: return false
        }
        remove(message, from: &state)
        return true
    }

    private static func remove(_ message: TrackedMessage, from state: inout State) {
        guard state.messages.removeValue(forKey: ObjectIdentifier(message)) != nil else { return }
        let source = Source(message)
        if let count = state.unsettled[source], count > 1 {
            state.unsettled[source] = count - 1
        } else {
            state.unsettled[source] = nil
        }
    }
}
