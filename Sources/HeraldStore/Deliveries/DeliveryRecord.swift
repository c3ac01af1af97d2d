import HeraldSupport

/// One delivery's outcome for ``DeliveryJournal/record(_:)``: the journal row, written once
/// (or, for a delivery that was retried, written when first retried and completed later).
public struct DeliveryRecord: SharedStorage, Sendable, Hashable {
    /// The record's properties, read and written as its own (``HeraldSupport/SharedStorage``).
    public struct Fields: Sendable, Hashable {
        public var deviceRef: Int64
        public var position: Int64
        /// The journal id of the message (``ClaimAnswer/messageIds``, ``MessageHistory/id``).
        public var messageId: Int64
        /// The addressed user (`"0"` for a broadcast).
        public var userId: String
        public var state: DeliveryState
        /// Attempts made so far, including the last one.
        public var attempts: Int
        /// The provider's id for the notification (`apns-id`, FCM message name), if it gave one.
        public var providerId: String?
        /// The provider's reason or a short description; never a token or payload text.
        public var lastError: String?
        /// For `.sent`: the exact body sent (UTF-8 JSON), kept as the device's notification-log
        /// entry.
        public var payload: [UInt8]?
        /// For `.tokenDead`: the token the provider refused. The device's token is marked dead
        /// only if it is still this one (a refreshed token survives a late answer about the old
        /// one).
        public var token: String?
        /// Whether the journal already holds a `.pending` row for this delivery (it was retried
        /// before): the row is then completed instead of written.
        public var completesPendingRow: Bool
        /// Where the delivery waited in its user's backlog (``DeliveryBacklog``): a terminal
        /// record removes it from there, in the same transaction.
        public var backlogPlace: BacklogPlace?
    }

    /// Shared by every copy (``HeraldSupport/Shared``): a record is copied into the engine's
    /// batch and into the journal's statement, once per delivery each.
    public var storage: Shared<Fields>

    public init(
        deviceRef: Int64, position: Int64, messageId: Int64, userId: String, state: DeliveryState, attempts: Int,
        providerId: String? = nil, lastError: String? = nil, payload: [UInt8]? = nil, token: String? = nil, completesPendingRow: Bool = false,
        backlogPlace: BacklogPlace? = nil
    ) {
        storage = Shared(
            Fields(
                deviceRef: deviceRef, position: position, messageId: messageId, userId: userId, state: state, attempts: attempts,
                providerId: providerId, lastError: lastError, payload: payload, token: token, completesPendingRow: completesPendingRow,
                backlogPlace: backlogPlace
            ))
    }
}
