import HeraldCore

/// One outcome for ``DeliveryJournal/record(_:)``. Build it with the static functions, one per
/// state.
public struct DeliveryRecord: Sendable, Hashable {
    public let deliveryKey: DeliveryKey
    public let state: DeliveryState
    /// Attempts made so far, including this one.
    public let attempts: Int
    /// The provider's reason or a short description; never a token or payload text.
    public let lastError: String?
    /// For `.sent`: the event id and the exact payload, appended to the notification log.
    public let eventId: String?
    public let payload: String?
    /// For `.tokenDead`: the token the provider refused. The device's token is marked dead
    /// only if it is still this one (a refreshed token survives a late answer about the old).
    public let token: String?

    /// The provider accepted the notification; `payload` goes to the notification log.
    public static func sent(_ key: DeliveryKey, attempts: Int, eventId: String?, payload: String) -> DeliveryRecord {
        DeliveryRecord(deliveryKey: key, state: .sent, attempts: attempts, lastError: nil, eventId: eventId, payload: payload, token: nil)
    }

    /// The token is dead: the delivery ends and the device's token is marked dead.
    public static func tokenDead(_ key: DeliveryKey, attempts: Int, token: String, reason: String) -> DeliveryRecord {
        DeliveryRecord(deliveryKey: key, state: .tokenDead, attempts: attempts, lastError: reason, eventId: nil, payload: nil, token: token)
    }

    /// The delivery failed for good.
    public static func failed(_ key: DeliveryKey, attempts: Int, reason: String) -> DeliveryRecord {
        DeliveryRecord(deliveryKey: key, state: .failed, attempts: attempts, lastError: reason, eventId: nil, payload: nil, token: nil)
    }

    /// A transient failure; the delivery stays pending and will be retried.
    public static func retrying(_ key: DeliveryKey, attempts: Int, reason: String) -> DeliveryRecord {
        DeliveryRecord(deliveryKey: key, state: .pending, attempts: attempts, lastError: reason, eventId: nil, payload: nil, token: nil)
    }
}
