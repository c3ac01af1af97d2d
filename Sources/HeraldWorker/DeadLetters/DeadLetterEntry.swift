import Foundation

/// One message in the dead-letter queue, as `herald dlq list` shows it (from its headers).
public struct DeadLetterEntry: Sendable, Hashable {
    /// `x-herald-dead-letter-id`; nil for a message the broker dead-lettered itself (a
    /// rejection or an expiry, with only `x-death`).
    public var id: String?
    /// `x-herald-error`, or the broker's `x-death` reason.
    public var code: String?
    public var reason: String?
    public var eventId: String?
    public var failedAt: Date?
    public var messageId: String?
    public var contentType: String?
    public var bodySize: Int
}
