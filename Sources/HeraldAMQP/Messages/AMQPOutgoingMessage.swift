import Foundation

/// A message to publish: where it goes, its body and its properties.
///
/// `mandatory` asks the broker to return the message when no queue is bound for it; the publish
/// then fails with ``AMQPError/Code/unroutable`` instead of silently vanishing.
public struct AMQPOutgoingMessage: Sendable, Hashable {
    /// Exchange name; `""` is the default exchange (routing key = queue name).
    public var exchange: String
    public var routingKey: String
    public var body: Data
    public var properties: AMQPProperties
    public var mandatory: Bool

    public init(
        exchange: String = "",
        routingKey: String,
        body: Data,
        properties: AMQPProperties = AMQPProperties(),
        mandatory: Bool = false
    ) {
        self.exchange = exchange
        self.routingKey = routingKey
        self.body = body
        self.properties = properties
        self.mandatory = mandatory
    }
}
