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
public struct AMQPDelivery: Sendable, Hashable {
    /// What the properties below read and write.
    private struct Fields: Sendable, Hashable {
        var body: Data
        var exchange: String
        var routingKey: String
        var deliveryTag: UInt64
        var redelivered: Bool
        var properties: AMQPProperties
        var consumerTag: String
        var messageCount: UInt32?
        var channelSession: UInt64
    }

    /// Shared by every copy (``Shared``).
    private var storage: Shared<Fields>

    public var body: Data {
        get { storage.value.body }
        set { storage.value.body = newValue }
    }
    /// The exchange the message was published to (`""` for the default exchange).
    public var exchange: String {
        get { storage.value.exchange }
        set { storage.value.exchange = newValue }
    }
    public var routingKey: String {
        get { storage.value.routingKey }
        set { storage.value.routingKey = newValue }
    }
    /// Identifies the delivery on its channel; monotonically increasing per consumer.
    public var deliveryTag: UInt64 {
        get { storage.value.deliveryTag }
        set { storage.value.deliveryTag = newValue }
    }
    /// True when the broker delivered this message before (to this or another consumer) without
    /// it being acknowledged.
    public var redelivered: Bool {
        get { storage.value.redelivered }
        set { storage.value.redelivered = newValue }
    }
    public var properties: AMQPProperties {
        get { storage.value.properties }
        set { storage.value.properties = newValue }
    }
    /// The consumer it was delivered to; empty for `basic.get`.
    public var consumerTag: String {
        get { storage.value.consumerTag }
        set { storage.value.consumerTag = newValue }
    }
    /// For `basic.get`: messages left in the queue after this one. `nil` for consumer deliveries.
    public var messageCount: UInt32? {
        get { storage.value.messageCount }
        set { storage.value.messageCount = newValue }
    }
    /// The channel session (unique per connection) the delivery tag belongs to.
    var channelSession: UInt64 { storage.value.channelSession }

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
            body: body,
            exchange: exchange,
            routingKey: routingKey,
            deliveryTag: deliveryTag,
            redelivered: redelivered,
            properties: properties,
            consumerTag: consumerTag,
            messageCount: messageCount,
            channelSession: 0
        )
    }

    init(
        body: Data,
        exchange: String,
        routingKey: String,
        deliveryTag: UInt64,
        redelivered: Bool,
        properties: AMQPProperties,
        consumerTag: String,
        messageCount: UInt32?,
        channelSession: UInt64
    ) {
        storage = Shared(
            Fields(
                body: body,
                exchange: exchange,
                routingKey: routingKey,
                deliveryTag: deliveryTag,
                redelivered: redelivered,
                properties: properties,
                consumerTag: consumerTag,
                messageCount: messageCount,
                channelSession: channelSession
            ))
    }
}
