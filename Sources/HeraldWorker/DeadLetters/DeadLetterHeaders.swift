import Foundation
import HeraldAMQP

/// The headers Herald adds to a dead letter, and removes again when it is replayed.
///
/// A dead letter is the original message (same body, same properties and headers) plus:
/// `x-herald-error` (a ``DeadLetterCode``), `x-herald-reason` (human text, at most 1,000
/// characters, never payload text), `x-herald-dead-letter-id` (a UUID, also the key of the
/// store's record), `x-herald-original-queue`, `x-herald-failed-at` (AMQP timestamp) and
/// `x-herald-failed-at-ms` (milliseconds since 1970).
public enum DeadLetterHeaders {
    public static let error = "x-herald-error"
    public static let reason = "x-herald-reason"
    public static let id = "x-herald-dead-letter-id"
    public static let originalQueue = "x-herald-original-queue"
    public static let failedAt = "x-herald-failed-at"
    public static let failedAtMilliseconds = "x-herald-failed-at-ms"
    public static let event = "x-herald-event-id"
    /// Set on a replayed dead letter: its `AvoidDublication` key may have been registered by the
    /// attempt that failed, so the delivery journal, not the key, decides what is a repeat.
    public static let replayed = "x-herald-replayed"
    /// Every header Herald adds starts with this.
    public static let prefix = "x-herald-"

    static let maxReasonLength = 1_000

    /// The properties of the dead letter of a message with `original` properties.
    public static func deadLetterProperties(
        original: AMQPProperties, code: DeadLetterCode, reason: String, id: String, queue: String, eventId: String?, failedAt: Date
    ) -> AMQPProperties {
        var properties = republishable(original)
        if properties.deliveryMode == nil { properties.deliveryMode = .persistent }
        properties.headers[error] = .string(code.rawValue)
        properties.headers[self.reason] = .string(reason.count > maxReasonLength ? String(reason.prefix(maxReasonLength - 1)) + "…" : reason)
        properties.headers[self.id] = .string(id)
        properties.headers[originalQueue] = .string(queue)
        properties.headers[self.failedAt] = .timestamp(failedAt)
        properties.headers[failedAtMilliseconds] = .int(Int64((failedAt.timeIntervalSince1970 * 1000).rounded()))
        if let eventId { properties.headers[event] = .string(String(eventId.prefix(200))) }
        return properties
    }

    /// The properties to publish a dead letter back with: Herald's headers and the broker's
    /// `x-death` removed, ``replayed`` added, everything else as the producer sent it.
    public static func replayProperties(_ deadLetter: AMQPProperties) -> AMQPProperties {
        var properties = republishable(deadLetter)
        properties.headers = properties.headers.filter { !$0.key.hasPrefix(prefix) && $0.key != "x-death" }
        properties.headers[replayed] = .bool(true)
        return properties
    }

    /// `properties` fit for Herald to publish: without `user-id`, which RabbitMQ checks against
    /// the publishing connection's user (a producer's validated user id would make Herald's
    /// publish fail with PRECONDITION_FAILED, over and over).
    public static func republishable(_ properties: AMQPProperties) -> AMQPProperties {
        var properties = properties
        properties.userID = nil
        return properties
    }
}
