import Foundation
import HeraldSupport

/// A message received from a queue, by a consumer (``AMQPConsumer``) or by
/// ``AMQPConnection/get(queue:autoAck:)``.
///
/// Settle it exactly once (unless it came with `autoAck`): ``AMQPConnection/ack(_:multiple:)``,
/// ``AMQPConnection/nack(_:multiple:requeue:)`` or ``AMQPConnection/reject(_:requeue:)``, or the
/// tag-based calls on the consumer. The delivery remembers the channel it came on, so a settlement
/// after that channel closed is dropped (the broker has already requeued the message) rather than
/// sent to the wrong channel.
public struct AMQPDelivery: SharedStorage, Sendable, Hashable {
    /// The delivery's properties, read and written as its own (``HeraldSupport/SharedStorage``).
    public struct Fields: Sendable, Hashable {
        public var body: Data
        /// The exchange the message was published to (`""` for the default exchange).
        public var exchange: String
        public var routingKey: String
        /// Identifies the delivery on its channel; monotonically increasing per consumer.
        public var deliveryTag: UInt64
        /// True when the broker delivered this message before (to this or another consumer)
        /// without it being acknowledged.
        public var redelivered: Bool
        public var properties: AMQPProperties
        /// The consumer it was delivered to; empty for `basic.get`.
        public var consumerTag: String
        /// For `basic.get`: messages left in the queue after this one. `nil` for consumer
        /// deliveries.
        public var messageCount: UInt32?
        /// The channel session (unique per connection) the delivery tag belongs to: set by the
        /// connection that received the delivery, read-only.
        let channelSession: UInt64
    }

    /// Shared by every copy (``HeraldSupport/Shared``).
    public var storage: Shared<Fields>

    /// A delivery made by hand, for tests and fakes of code that consumes. It belongs to no
    /// channel: settling it on a connection does nothing.
    public init(
        body: Data,
        exchange: String = "",
        routingKey: String,
        deliveryTag: UInt64,
        redelivered: Bool = false,
        properties: AMQPProperties = AMQPProperties(),
        consumerTag: String = "",
        messageCount: UInt32? = nil
    ) {
        self.init(
            Fields(
                body: body, exchange: exchange, routingKey: routingKey, deliveryTag: deliveryTag, redelivered: redelivered,
                properties: properties, consumerTag: consumerTag, messageCount: messageCount, channelSession: 0
            ))
    }

    /// A delivery received on a channel: the driver fills in every field, the channel's session
    /// too.
    init(_ fields: Fields) { storage = Shared(fields) }
}
