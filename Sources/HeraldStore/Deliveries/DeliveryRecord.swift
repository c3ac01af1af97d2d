/// One delivery's outcome for ``DeliveryJournal/record(_:)``: the journal row, written once
/// (or, for a delivery that was retried, written when first retried and completed later).
public struct DeliveryRecord: Sendable, Hashable {
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
    /// For `.sent`: the exact body sent (UTF-8 JSON), kept as the device's notification-log entry.
    public var payload: [UInt8]?
    /// For `.tokenDead`: the token the provider refused. The device's token is marked dead only
    /// if it is still this one (a refreshed token survives a late answer about the old one).
    public var token: String?
    /// Whether the journal already holds a `.pending` row for this delivery (it was retried
    /// before): the row is then completed instead of written.
    public var completesPendingRow: Bool

    public init(
        deviceRef: Int64, position: Int64, messageId: Int64, userId: String, state: DeliveryState, attempts: Int,
        providerId: String? = nil, lastError: String? = nil, payload: [UInt8]? = nil, token: String? = nil, completesPendingRow: Bool = false
    ) {
        self.deviceRef = deviceRef
        self.position = position
        self.messageId = messageId
        self.userId = userId
        self.state = state
        self.attempts = attempts
        self.providerId = providerId
        self.lastError = lastError
        self.payload = payload
        self.token = token
        self.completesPendingRow = completesPendingRow
    }
}
