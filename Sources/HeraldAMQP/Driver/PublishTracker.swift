import Foundation

/// Publisher-confirm bookkeeping for the publishing channel: publish sequence numbers awaiting
/// `basic.ack`/`basic.nack`, `multiple` confirms, and `basic.return` matching.
///
/// A `basic.return` carries no sequence number. The broker sends it before the confirm of the same
/// message and in publish order, so it belongs to the oldest unconfirmed, not yet returned,
/// mandatory publish with the same exchange, routing key and body (identical messages are
/// interchangeable: they route alike). That publish then fails with ``AMQPError/Code/unroutable``
/// when its ack arrives.
///
/// Thread rule: owned by the connection thread.
struct PublishTracker {
    private struct Pending {
        let sink: PublishSink
        /// Kept (copy-on-write, no copy made) for mandatory publishes only, to match returns.
        let mandatoryMessage: AMQPOutgoingMessage?
        var returned: AMQPError?
    }

    private var pending: [UInt64: Pending] = [:]
    private var mandatoryOrder: [UInt64] = []
    /// The next publish sequence number; confirm mode numbers publishes from 1 per channel.
    private(set) var nextSequence: UInt64 = 1
    private var lowest: UInt64 = 1

    var outstanding: Int { pending.count }
    var isEmpty: Bool { pending.isEmpty }

    /// Registers the publish just sent and returns its sequence number.
    @discardableResult
    mutating func register(_ sink: PublishSink, message: AMQPOutgoingMessage) -> UInt64 {
        let sequence = nextSequence
        nextSequence += 1
        pending[sequence] = Pending(sink: sink, mandatoryMessage: message.mandatory ? message : nil)
        if message.mandatory { mandatoryOrder.append(sequence) }
        return sequence
    }

    /// Applies a `basic.ack` (`nack == nil`) or `basic.nack` (the error to fail with).
    mutating func confirm(_ tag: UInt64, multiple: Bool, nack: AMQPError?) {
        if multiple {
            var sequence = lowest
            while sequence <= tag, sequence < nextSequence {
                complete(sequence, nack: nack)
                sequence += 1
            }
        } else {
            complete(tag, nack: nack)
        }
        while lowest < nextSequence, pending[lowest] == nil { lowest += 1 }
    }

    /// Marks the publish a `basic.return` refers to; it fails when its confirm arrives.
    mutating func markReturned(exchange: String, routingKey: String, body: Data, error: AMQPError) -> Bool {
        for sequence in mandatoryOrder {
            guard var entry = pending[sequence], entry.returned == nil, let message = entry.mandatoryMessage else { continue }
            if message.exchange == exchange, message.routingKey == routingKey, message.body == body {
                entry.returned = error
                pending[sequence] = entry
                return true
            }
        }
        return false
    }

    /// Fails every unconfirmed publish (channel or connection gone) and starts numbering anew.
    mutating func failAll(_ error: AMQPError) {
        let entries = pending.sorted { $0.key < $1.key }
        pending.removeAll()
        mandatoryOrder.removeAll()
        nextSequence = 1
        lowest = 1
        for (_, entry) in entries { entry.sink.complete(error) }
    }

    private mutating func complete(_ sequence: UInt64, nack: AMQPError?) {
        guard let entry = pending.removeValue(forKey: sequence) else { return }
        if entry.mandatoryMessage != nil, let position = mandatoryOrder.firstIndex(of: sequence) {
            mandatoryOrder.remove(at: position)
        }
        entry.sink.complete(nack ?? entry.returned)
    }
}
