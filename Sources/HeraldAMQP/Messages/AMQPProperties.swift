import Foundation
import HeraldSupport

/// The AMQP `basic` content properties of a message.
///
/// Outgoing messages are persistent unless ``Fields/deliveryMode`` says otherwise; `nil` fields
/// and an empty ``Fields/headers`` table are not sent. On incoming messages a field is `nil` when
/// the publisher did not set it.
public struct AMQPProperties: SharedStorage, Sendable, Hashable {
    /// The properties, read and written as the struct's own (``HeraldSupport/SharedStorage``).
    public struct Fields: Sendable, Hashable {
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
    }

    /// Shared by every copy (``HeraldSupport/Shared``).
    public var storage: Shared<Fields>

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
        guard let entries = self.headers["x-death"]?.arrayValue else { return [] }
        return entries.compactMap { $0.tableValue.map(AMQPDeathRecord.init(table:)) }
    }
}
