import Foundation
import HeraldSupport

/// The AMQP `basic` content properties of a message.
///
/// Outgoing messages are persistent unless ``deliveryMode`` says otherwise; `nil` fields and an
/// empty ``headers`` table are not sent. On incoming messages a field is `nil` when the publisher
/// did not set it.
public struct AMQPProperties: Sendable, Hashable {
    /// What the properties below read and write.
    private struct Fields: Sendable, Hashable {
        var contentType: String?
        var contentEncoding: String?
        var headers: AMQPTable
        var deliveryMode: AMQPDeliveryMode?
        var priority: UInt8?
        var correlationID: String?
        var replyTo: String?
        var expiration: String?
        var messageID: String?
        var timestamp: Date?
        var type: String?
        var userID: String?
        var appID: String?
    }

    /// Shared by every copy (``Shared``).
    private var storage: Shared<Fields>

    /// MIME type of the body, e.g. `application/json`, `text/xml`.
    public var contentType: String? {
        get { storage.value.contentType }
        set { storage.value.contentType = newValue }
    }
    /// Content encoding of the body, e.g. `gzip`.
    public var contentEncoding: String? {
        get { storage.value.contentEncoding }
        set { storage.value.contentEncoding = newValue }
    }
    /// Application headers (Herald uses `AvoidDublication`, `x-herald-error`; the broker adds
    /// `x-death` when it dead-letters).
    public var headers: AMQPTable {
        get { storage.value.headers }
        set { storage.value.headers = newValue }
    }
    /// Persistent by default when publishing; `nil` on a received message that carried none.
    public var deliveryMode: AMQPDeliveryMode? {
        get { storage.value.deliveryMode }
        set { storage.value.deliveryMode = newValue }
    }
    /// 0…9 (or the queue's `x-max-priority`).
    public var priority: UInt8? {
        get { storage.value.priority }
        set { storage.value.priority = newValue }
    }
    public var correlationID: String? {
        get { storage.value.correlationID }
        set { storage.value.correlationID = newValue }
    }
    public var replyTo: String? {
        get { storage.value.replyTo }
        set { storage.value.replyTo = newValue }
    }
    /// Per-message TTL in milliseconds, as a decimal string (AMQP's own convention).
    public var expiration: String? {
        get { storage.value.expiration }
        set { storage.value.expiration = newValue }
    }
    public var messageID: String? {
        get { storage.value.messageID }
        set { storage.value.messageID = newValue }
    }
    /// Whole seconds; AMQP timestamps have no fraction.
    public var timestamp: Date? {
        get { storage.value.timestamp }
        set { storage.value.timestamp = newValue }
    }
    public var type: String? {
        get { storage.value.type }
        set { storage.value.type = newValue }
    }
    /// Checked by RabbitMQ against the connection's user when set.
    public var userID: String? {
        get { storage.value.userID }
        set { storage.value.userID = newValue }
    }
    public var appID: String? {
        get { storage.value.appID }
        set { storage.value.appID = newValue }
    }

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
        storage = Shared(
            Fields(
                contentType: contentType,
                contentEncoding: contentEncoding,
                headers: headers,
                deliveryMode: deliveryMode,
                priority: priority,
                correlationID: correlationID,
                replyTo: replyTo,
                expiration: expiration,
                messageID: messageID,
                timestamp: timestamp,
                type: type,
                userID: userID,
                appID: appID
            ))
    }

    /// The `x-death` header decoded: one record per (queue, reason) that dead-lettered the
    /// message, most recent first, as RabbitMQ writes them. Empty when the message was never
    /// dead-lettered.
    public var deathRecords: [AMQPDeathRecord] {
        guard let entries = headers["x-death"]?.arrayValue else { return [] }
        return entries.compactMap { $0.tableValue.map(AMQPDeathRecord.init(table:)) }
    }
}
