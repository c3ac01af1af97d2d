/// An exchange to declare (`exchange.declare`). Durable by default: it survives broker restarts.
public struct AMQPExchange: Sendable, Hashable {
    public var name: String
    public var type: AMQPExchangeType
    public var durable: Bool
    /// Deleted by the broker when its last binding goes.
    public var autoDelete: Bool
    /// Only reachable through exchange-to-exchange bindings, not by publishers.
    public var `internal`: Bool
    public var arguments: AMQPTable

    public init(
        name: String,
        type: AMQPExchangeType = .direct,
        durable: Bool = true,
        autoDelete: Bool = false,
        internal: Bool = false,
        arguments: AMQPTable = [:]
    ) {
        self.name = name
        self.type = type
        self.durable = durable
        self.autoDelete = autoDelete
        self.internal = `internal`
        self.arguments = arguments
    }
}
