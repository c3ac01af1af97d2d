/// A queue bound to an exchange under a routing key (`queue.bind`).
public struct AMQPBinding: Sendable, Hashable {
    public var queue: String
    public var exchange: String
    public var routingKey: String
    public var arguments: AMQPTable

    public init(queue: String, exchange: String, routingKey: String, arguments: AMQPTable = [:]) {
        self.queue = queue
        self.exchange = exchange
        self.routingKey = routingKey
        self.arguments = arguments
    }
}
