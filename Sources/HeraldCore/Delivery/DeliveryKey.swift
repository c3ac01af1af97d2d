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
        let count = messageKey.utf8.count + deviceId.utf8.count + userId.utf8.count + 2 + (app.map { $0.utf8.count + 1 } ?? 0)
        // The input on the stack, not in an array: a key is made for every delivery.
        rawValue = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { input in
            var at = 0
            func append(_ part: String, separated: Bool) {
                if separated {
                    input[at] = 0
                    at += 1
                }
                at += UnsafeMutableBufferPointer(rebasing: input[at...]).initialize(fromContentsOf: part.utf8)
            }
            append(messageKey, separated: false)
            append(deviceId, separated: true)
            append(userId, separated: true)
            if let app { append(app, separated: true) }
            return SHA256.hexDigest(UnsafeBufferPointer(input))
        }
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
