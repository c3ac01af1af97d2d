import Crypto

/// The stable identity of one delivery: one message, to one device of one app, for one user.
///
/// Derived, never random, so that a redelivered AMQP message yields the same keys: the worker
/// records a key when the notification is sent and skips it on redelivery, and the senders use
/// it as `apns-collapse-id` (≤ 64 bytes) and FCM `collapse_key`. The user is part of the key
/// because one device can receive the same event for two wallets (seed 000); the app is, because
/// two apps on one installation may report the same hardware id.
///
/// The value is the lowercase hex SHA-256 of `messageKey`, `deviceId` and `userId` — and `app`,
/// when it is not the default app — joined by NUL bytes (so that no two different inputs
/// coincide): 64 ASCII characters. Keys of the default app are those of the three-part form.
public struct DeliveryKey: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
    public let rawValue: String

    public init(messageKey: String, deviceId: String, userId: String, app: String? = nil) {
        var input: [UInt8] = []
        input.reserveCapacity(messageKey.utf8.count + deviceId.utf8.count + userId.utf8.count + (app?.utf8.count ?? 0) + 3)
        input.append(contentsOf: messageKey.utf8)
        input.append(0)
        input.append(contentsOf: deviceId.utf8)
        input.append(0)
        input.append(contentsOf: userId.utf8)
        if let app {
            input.append(0)
            input.append(contentsOf: app.utf8)
        }
        rawValue = SHA256.hexDigest(input)
    }

    /// Restores a key read back from the store.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A message key for a body that has no AMQP `message-id`: the SHA-256 of the body bytes.
    public static func messageKey(forBody body: some Sequence<UInt8>) -> String {
        SHA256.hexDigest(body)
    }

    public var description: String { rawValue }

    public static func < (lhs: DeliveryKey, rhs: DeliveryKey) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
