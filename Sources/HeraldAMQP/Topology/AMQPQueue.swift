/// A queue to declare (`queue.declare`), with the arguments Herald uses named.
///
/// The named fields become `x-` arguments (see ``declarationArguments``); ``arguments`` adds any
/// other and wins on a clash. Durable by default.
public struct AMQPQueue: Sendable, Hashable {
    public var name: String
    public var durable: Bool
    /// Owned by the declaring connection and deleted with it (not allowed for quorum queues).
    public var exclusive: Bool
    /// Deleted when its last consumer goes (not allowed for quorum queues).
    public var autoDelete: Bool
    /// `x-queue-type`; `nil` leaves the broker's default (classic).
    public var type: AMQPQueueType?
    /// `x-dead-letter-exchange`: where rejected, expired or overflowing messages go.
    public var deadLetterExchange: String?
    /// `x-dead-letter-routing-key`: replaces the routing key of dead-lettered messages.
    public var deadLetterRoutingKey: String?
    /// `x-single-active-consumer`: only one consumer receives at a time; another takes over when
    /// it goes (Herald's partition queues).
    public var singleActiveConsumer: Bool
    /// `x-max-priority` (classic queues).
    public var maxPriority: UInt8?
    /// Further arguments, e.g. `x-delivery-limit`, `x-message-ttl`.
    public var arguments: AMQPTable

    public init(
        name: String,
        durable: Bool = true,
        exclusive: Bool = false,
        autoDelete: Bool = false,
        type: AMQPQueueType? = nil,
        deadLetterExchange: String? = nil,
        deadLetterRoutingKey: String? = nil,
        singleActiveConsumer: Bool = false,
        maxPriority: UInt8? = nil,
        arguments: AMQPTable = [:]
    ) {
        self.name = name
        self.durable = durable
        self.exclusive = exclusive
        self.autoDelete = autoDelete
        self.type = type
        self.deadLetterExchange = deadLetterExchange
        self.deadLetterRoutingKey = deadLetterRoutingKey
        self.singleActiveConsumer = singleActiveConsumer
        self.maxPriority = maxPriority
        self.arguments = arguments
    }

    /// The argument table sent with `queue.declare`.
    public var declarationArguments: AMQPTable {
        var table: AMQPTable = [:]
        if let type { table["x-queue-type"] = .string(type.rawValue) }
        if let deadLetterExchange { table["x-dead-letter-exchange"] = .string(deadLetterExchange) }
        if let deadLetterRoutingKey { table["x-dead-letter-routing-key"] = .string(deadLetterRoutingKey) }
        if singleActiveConsumer { table["x-single-active-consumer"] = .bool(true) }
        if let maxPriority { table["x-max-priority"] = .int(Int64(maxPriority)) }
        table.merge(arguments) { _, explicit in explicit }
        return table
    }
}
