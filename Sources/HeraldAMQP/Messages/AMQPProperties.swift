import Foundation

/// The AMQP `basic` content properties of a message.
///
/// Outgoing messages are persistent unless ``deliveryMode`` says otherwise; `nil` fields and an
/// empty ``headers`` table are not sent. On incoming messages a field is `nil` when the publisher
/// did not set it.
public struct AMQPProperties: Sendable, Hashable {
    /// MIME type of the body, e.g. `application/json`, `text/xml`.
    public var contentType: String?
    /// Content encoding of the body, e.g. `gzip`.
    public var contentEncoding: String?
    /// Application headers (Herald uses `AvoidDublication`, `x-herald-error`; the broker adds
    /// `x-death` when it dead-letters).
    public var headers: AMQPTable
    /// Persistent by default when publishing; `nil` on a received message that carried none.
    public var deliveryMode: AMQPDeliveryMode?
    /// 0…9 (or the queue's `x-max-priority`).
    public var priority: UInt8?
    public var correlationID: String?
    public var replyTo: String?
    /// Per-message TTL in milliseconds, as a decimal string (AMQP's own convention).
    public var expiration: String?
    public var messageID: String?
    /// Whole seconds; AMQP timestamps have no fraction.
    public var timestamp: Date?
    public var type: String?
    /// Checked by RabbitMQ against the connection's user when set.
    public var userID: String?
    public var appID: String?

    public init(
        contentType: String? = nil,
        contentEncoding: String? = nil,
        headers: AMQPTable = [:],
        deliveryMode: AMQPDeliveryMode? = .persistent,
        priority: UInt8? = nil,
        correlationID: String? = nil,
        replyTo: String? = nil,
        expiration: String? = nil,
        messageID: String? = nil,
        timestamp: Date? = nil,
        type: String? = nil,
        userID: String? = nil,
        appID: String? = nil
    ) {
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.headers = headers
        self.deliveryMode = deliveryMode
        self.priority = priority
        self.correlationID = correlationID
        self.replyTo = replyTo
        self.expiration = expiration
        self.messageID = messageID
        self.timestamp = timestamp
        self.type = type
        self.userID = userID
        self.appID = appID
    }

    /// The `x-death` header decoded: one record per (queue, reason) that dead-lettered the
    /// message, most recent first, as RabbitMQ writes them. Empty when the message was never
    /// dead-lettered.
    public var deathRecords: [AMQPDeathRecord] {
        guard let entries = headers["x-death"]?.arrayValue else { return [] }
        return entries.compactMap { $0.tableValue.map(AMQPDeathRecord.init(table:)) }
    }
}
