import Foundation

/// One entry of RabbitMQ's `x-death` header: why and from where a message was dead-lettered.
///
/// Used by `herald dlq list` and the replay to show the reason (`rejected`, `expired`,
/// `maxlen`, `delivery_limit`) and the queue the message came from.
public struct AMQPDeathRecord: Sendable, Hashable {
    /// The queue the message was dead-lettered from.
    public var queue: String?
    /// `rejected`, `expired`, `maxlen` or `delivery_limit`.
    public var reason: String?
    /// How many times it was dead-lettered from this queue for this reason.
    public var count: Int64
    /// The exchange the message had been published to.
    public var exchange: String?
    /// The routing keys it had been published with (including CC/BCC).
    public var routingKeys: [String]
    /// When it was dead-lettered (whole seconds).
    public var time: Date?
    /// The full table, for fields not named here.
    public var table: AMQPTable

    public init(table: AMQPTable) {
        self.table = table
        queue = table["queue"]?.stringValue
        reason = table["reason"]?.stringValue
        count = table["count"]?.intValue ?? 0
        exchange = table["exchange"]?.stringValue
        routingKeys = table["routing-keys"]?.arrayValue?.compactMap(\.stringValue) ?? []
        time = table["time"]?.dateValue
    }
}
