import Foundation

/// A message the worker sent to the dead-letter queue, and why.
public struct DeadLetter: Sendable, Hashable {
    /// Unique; a lowercase UUID unless the caller has a better id.
    public var id: String
    public var messageKey: String?
    /// The queue the message came from.
    public var queue: String
    /// A stable, machine-readable code (e.g. a decoding error code).
    public var errorCode: String
    /// A human-readable reason; never payload text or tokens.
    public var reason: String
    public var eventId: String?
    public var createdAt: Date
    public var replayedAt: Date?

    public init(
        id: String = UUID().uuidString.lowercased(), messageKey: String?, queue: String, errorCode: String, reason: String,
        eventId: String? = nil, createdAt: Date = Date(), replayedAt: Date? = nil
    ) {
        self.id = id
        self.messageKey = messageKey
        self.queue = queue
        self.errorCode = errorCode
        self.reason = reason
        self.eventId = eventId
        self.createdAt = createdAt
        self.replayedAt = replayedAt
    }
}
