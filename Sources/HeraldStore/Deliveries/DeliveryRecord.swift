import HeraldSupport

/// One delivery's outcome for ``DeliveryJournal/record(_:)``: the journal row, written once
/// (or, for a delivery that was retried, written when first retried and completed later).
public struct DeliveryRecord: Sendable, Hashable {
    /// What the properties below read and write.
    private struct Fields: Sendable, Hashable {
        var deviceRef: Int64
        var position: Int64
        var messageId: Int64
        var userId: String
        var state: DeliveryState
        var attempts: Int
        var providerId: String?
        var lastError: String?
        var payload: [UInt8]?
        var token: String?
        var completesPendingRow: Bool
        var backlogPlace: BacklogPlace?
    }

    /// Shared by every copy (``HeraldSupport/Shared``): a record is copied into the engine's
    /// batch and into the journal's statement, once per delivery each.
    private var storage: Shared<Fields>

    public var deviceRef: Int64 {
        get { storage.value.deviceRef }
        set { storage.value.deviceRef = newValue }
    }
    public var position: Int64 {
        get { storage.value.position }
        set { storage.value.position = newValue }
    }
    /// The journal id of the message (``ClaimAnswer/messageIds``, ``MessageHistory/id``).
    public var messageId: Int64 {
        get { storage.value.messageId }
        set { storage.value.messageId = newValue }
    }
    /// The addressed user (`"0"` for a broadcast).
    public var userId: String {
        get { storage.value.userId }
        set { storage.value.userId = newValue }
    }
    public var state: DeliveryState {
        get { storage.value.state }
        set { storage.value.state = newValue }
    }
    /// Attempts made so far, including the last one.
    public var attempts: Int {
        get { storage.value.attempts }
        set { storage.value.attempts = newValue }
    }
    /// The provider's id for the notification (`apns-id`, FCM message name), if it gave one.
    public var providerId: String? {
        get { storage.value.providerId }
        set { storage.value.providerId = newValue }
    }
    /// The provider's reason or a short description; never a token or payload text.
    public var lastError: String? {
        get { storage.value.lastError }
        set { storage.value.lastError = newValue }
    }
    /// For `.sent`: the exact body sent (UTF-8 JSON), kept as the device's notification-log entry.
    public var payload: [UInt8]? {
        get { storage.value.payload }
        set { storage.value.payload = newValue }
    }
    /// For `.tokenDead`: the token the provider refused. The device's token is marked dead only
    /// if it is still this one (a refreshed token survives a late answer about the old one).
    public var token: String? {
        get { storage.value.token }
        set { storage.value.token = newValue }
    }
    /// Whether the journal already holds a `.pending` row for this delivery (it was retried
    /// before): the row is then completed instead of written.
    public var completesPendingRow: Bool {
        get { storage.value.completesPendingRow }
        set { storage.value.completesPendingRow = newValue }
    }

    /// Where the delivery waited in its user's backlog (``DeliveryBacklog``): a terminal record
    /// removes it from there, in the same transaction.
    public var backlogPlace: BacklogPlace? {
        get { storage.value.backlogPlace }
        set { storage.value.backlogPlace = newValue }
    }

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
