import HeraldAMQP
import HeraldCore
import Synchronization

/// Which AMQP message waits for which deliveries: the rule "acknowledge a message only when
/// every delivery it produced is terminal and recorded" lives here.
///
/// A message is registered when it arrives, gets its deliveries attached during fan-out, and is
/// sealed when fan-out is done; it is ready to acknowledge once sealed with no delivery left.
/// A delivery key already in flight here (the same message redelivered after a reconnect, or
/// published twice) is *joined* instead of started again: the second message then waits for
/// the same delivery. An abandoned delivery (shutdown) never finishes, so its messages are never
/// acknowledged and the broker requeues them.
///
/// Thread-safe (a `Mutex`); the caller acknowledges the messages it gets back, outside the lock.
final class MessageTracker: Sendable {
    /// A received message and where to acknowledge it.
    struct Message: Sendable {
        let delivery: AMQPDelivery
        let connection: AMQPConnection
        /// The connection session it arrived on.
        let session: UInt64
        /// For a partition copy (`worker.partitions` > 0): the users it is for; nil otherwise.
        var slice: PartitionSlice? = nil
    }

    enum Attachment: Equatable {
        /// The delivery was not in flight: start it.
        case started
        /// The same delivery is already in flight; the message now waits for it too.
        case joined
    }

    private struct Entry {
        let message: Message
        var remaining = 0
        var sealed = false
    }

    private struct State {
        var messages: [UInt64: Entry] = [:]
        var deliveries: [DeliveryKey: [UInt64]] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Messages received and not yet settled.
    var messageCount: Int { state.withLock { $0.messages.count } }
    /// Deliveries started (or joined) and not yet finished or abandoned.
    var deliveryCount: Int { state.withLock { $0.deliveries.count } }

    func register(_ message: Message) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.messages[state.nextID] = Entry(message: message)
            return state.nextID
        }
    }

    /// Makes message `id` wait for delivery `key`.
    func attach(_ id: UInt64, to key: DeliveryKey) -> Attachment {
        state.withLock { state in
            state.messages[id]?.remaining += 1
            if state.deliveries[key] != nil {
                state.deliveries[key]!.append(id)
                return .joined
            }
            state.deliveries[key] = [id]
            return .started
        }
    }

    /// Ends fan-out of message `id`; returns it (and forgets it) when nothing is left to wait for.
    func seal(_ id: UInt64) -> Message? {
        state.withLock { state in
            guard var entry = state.messages[id] else { return nil }
            entry.sealed = true
            if entry.remaining == 0 {
                state.messages[id] = nil
                return entry.message
            }
            state.messages[id] = entry
            return nil
        }
    }

    /// Settles message `id` without deliveries (dead-lettered, a duplicate): forgets and returns it.
    func remove(_ id: UInt64) -> Message? {
        state.withLock { $0.messages.removeValue(forKey: id)?.message }
    }

    /// Delivery `key` is terminal and recorded; returns the messages that have nothing left to wait for.
    func finish(_ key: DeliveryKey) -> [Message] {
        state.withLock { state in
            guard let waiting = state.deliveries.removeValue(forKey: key) else { return [] }
            var ready: [Message] = []
            for id in waiting {
                guard var entry = state.messages[id] else { continue }
                entry.remaining -= 1
                if entry.remaining == 0 && entry.sealed {
                    state.messages[id] = nil
                    ready.append(entry.message)
                } else {
                    state.messages[id] = entry
                }
            }
            return ready
        }
    }

    /// Whether a tracked message still waits for delivery `key`: false once every message that
    /// wanted it belonged to a lost connection (``forgetSession(_:)``). The broker has requeued
    /// those, perhaps to another process, so sending now could send twice or out of order.
    func isAwaited(_ key: DeliveryKey) -> Bool {
        state.withLock { state in
            state.deliveries[key]?.contains { state.messages[$0] != nil } ?? false
        }
    }

    /// Delivery `key` will not finish here (the worker is stopping): its messages stay unsettled.
    func abandon(_ key: DeliveryKey) {
        state.withLock { _ = $0.deliveries.removeValue(forKey: key) }
    }

    /// Forgets the unsettled messages of a lost connection session (the broker requeues them);
    /// returns how many.
    func forgetSession(_ session: UInt64) -> Int {
        state.withLock { state in
            let lost = state.messages.filter { $0.value.message.session == session }.map(\.key)
            for id in lost { state.messages[id] = nil }
            return lost.count
        }
    }
}
