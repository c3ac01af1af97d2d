import Foundation
import HeraldCore

/// One delivery as a support desk sees it: the journal's row, and the device's token shortened
/// (never the whole token).
public struct SupportDelivery: Sendable, Hashable {
    public var status: DeliveryStatus
    /// The device's current token, shortened (``HeraldCore/LogKey/shortToken(_:)``); `nil` when the
    /// device is gone or has no token.
    public var shortToken: String?

    /// `sent`, `retrying`, `token_dead`, `failed` (what `herald deliveries` prints).
    /// `retrying` for a pending row; `deferred` while its provider's circuit breaker keeps it in
    /// the wait queue; otherwise the journal's state.
    public var stateName: String { status.state == .pending ? "retrying" : status.state.rawValue }

    /// When the provider accepted it (the row's time, for a sent delivery).
    public var sentAt: Date? { status.state == .sent ? status.recordedAt : nil }

    public var json: JSONValue {
        var fields: [String: JSONValue] = [
            "messageKey": .string(status.messageKey),
            "userId": .string(status.userId),
            "position": .int(status.position),
            "state": .string(stateName),
            "attempts": .int(status.attempts),
            "receivedAt": .string(SupportJSON.date(status.receivedAt)),
            "recordedAt": .string(SupportJSON.date(status.recordedAt)),
        ]
        fields["deviceId"] = status.deviceId.map(JSONValue.string) ?? .null
        fields["token"] = shortToken.map(JSONValue.string) ?? .null
        fields["platform"] = status.platform.map { .string($0.rawValue) } ?? .null
        fields["app"] = status.app.map(JSONValue.string) ?? .null
        fields["eventId"] = status.eventId.map(JSONValue.string) ?? .null
        fields["providerId"] = status.providerId.map(JSONValue.string) ?? .null
        fields["lastError"] = status.lastError.map(JSONValue.string) ?? .null
        fields["sentAt"] = sentAt.map { .string(SupportJSON.date($0)) } ?? .null
        fields["deliveryKey"] = status.deliveryKey.map { .string($0.rawValue) } ?? .null
        return .object(fields)
    }
}

/// What Herald knows of one message key: `herald deliveries show` and
/// `GET /v1/admin/messages/{messageId}`.
public struct MessageReport: Sendable, Hashable {
    /// One journal row of the message: the message itself, or one partition copy of it.
    public struct Copy: Sendable, Hashable {
        /// `"#p<p>/<K>"` for a partition copy, empty for the message itself.
        public var partition: String
        /// When the claim created the row (the message was received and its deliveries claimed).
        public var receivedAt: Date
        public var eventId: String?
        /// Deliveries the claim planned; `nil` for rows older than schema version 3.
        public var planned: Int?
        /// `AvoidDublication` repeats of it dropped, and the last one's time.
        public var repeats: Int
        public var lastRepeatAt: Date?
        /// Planned deliveries with no journal row yet: claimed and in flight (or their worker
        /// died before recording them; they are sent again when the message comes back).
        public var claimedWithoutOutcome: Int
        /// A broadcast sent in windows: how far it went.
        public var broadcast: BroadcastProgress?
    }

    public var messageKey: String
    public var copies: [Copy]
    public var deliveries: [SupportDelivery]
    /// Dead letters recorded with this key (the reason it was refused).
    public var deadLetters: [DeadLetter]

    /// Neither received nor dead-lettered within the retention.
    public var isUnknown: Bool { copies.isEmpty && deadLetters.isEmpty }

    /// One word for the whole: `unknown` (never seen within the retention), `dead_lettered`,
    /// `claimed` (deliveries claimed, no outcome yet), `sent` (every planned delivery sent),
    /// `partly_sent`, `not_sent` (none sent: token dead, failed or retrying), `no_recipients`.
    /// Dropped `AvoidDublication` repeats are counted apart (``repeatsDropped``): a repeat has
    /// its first copy's key, so the answer is the first copy's deliveries.
    public var summary: String {
        if copies.isEmpty { return deadLetters.isEmpty ? "unknown" : "dead_lettered" }
        let claimed = copies.reduce(0) { $0 + $1.claimedWithoutOutcome }
        let sent = deliveries.filter { $0.status.state == .sent }.count
        if deliveries.isEmpty { return claimed > 0 ? "claimed" : "no_recipients" }
        if sent == deliveries.count { return claimed > 0 ? "partly_sent" : "sent" }
        return sent == 0 ? (claimed > 0 ? "claimed" : "not_sent") : "partly_sent"
    }

    /// Repeats dropped over every copy.
    public var repeatsDropped: Int { copies.reduce(0) { $0 + $1.repeats } }

    public var json: JSONValue {
        .object([
            "messageKey": .string(messageKey),
            "summary": .string(summary),
            "repeatsDropped": .int(repeatsDropped),
            "copies": .array(
                copies.map { copy in
                    .object([
                        "partition": copy.partition.isEmpty ? .null : .string(copy.partition),
                        "receivedAt": .string(SupportJSON.date(copy.receivedAt)),
                        "eventId": copy.eventId.map(JSONValue.string) ?? .null,
                        "planned": copy.planned.map(JSONValue.int) ?? .null,
                        "claimedWithoutOutcome": .int(copy.claimedWithoutOutcome),
                        "repeats": .int(copy.repeats),
                        "lastRepeatAt": copy.lastRepeatAt.map { .string(SupportJSON.date($0)) } ?? .null,
                        "broadcast": copy.broadcast.map { progress in
                            .object([
                                "done": .bool(progress.done), "selected": .int(Int(progress.selected)), "sent": .int(Int(progress.sent)),
                                "waiting": .int(Int(progress.waiting)), "failed": .int(Int(progress.failed)),
                            ])
                        } ?? .null,
                    ])
                }),
            "deliveries": .array(deliveries.map(\.json)),
            "deadLetters": .array(
                deadLetters.map { letter in
                    .object([
                        "id": .string(letter.id),
                        "errorCode": .string(letter.errorCode),
                        "reason": .string(letter.reason),
                        "eventId": letter.eventId.map(JSONValue.string) ?? .null,
                        "queue": .string(letter.queue),
                        "createdAt": .string(SupportJSON.date(letter.createdAt)),
                        "replayedAt": letter.replayedAt.map { .string(SupportJSON.date($0)) } ?? .null,
                    ])
                }),
        ])
    }
}

/// A user's deliveries: `herald deliveries list` and `GET /v1/admin/users/{userId}/deliveries`.
public struct UserDeliveriesReport: Sendable, Hashable {
    public var userId: String
    public var since: Date
    /// Newest first.
    public var deliveries: [SupportDelivery]
    /// More matched than the limit.
    public var hasMore: Bool

    public var json: JSONValue {
        .object([
            "userId": .string(userId),
            "since": .string(SupportJSON.date(since)),
            "hasMore": .bool(hasMore),
            "deliveries": .array(deliveries.map(\.json)),
        ])
    }
}

enum SupportJSON {
    /// As Hummingbird's JSON encoder writes dates (ISO 8601, whole seconds, UTC).
    static func date(_ date: Date) -> String { date.formatted(.iso8601) }
}
