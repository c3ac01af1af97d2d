import HeraldCore

extension DeliveryKey {
    /// The `apns-id` Herald sends for this delivery: the key's first 128 bits as a canonical
    /// lowercase UUID, marked version 8 (RFC 9562's custom layout) with the RFC variant bits.
    ///
    /// Derived rather than random, for two reasons. A resend of an in-doubt delivery is the same
    /// notification, so it keeps the same id (as it keeps the same `apns-collapse-id`), and a
    /// support desk can compute the id Apple reports from the delivery key alone. And it costs
    /// no read of the system's random source per request (Foundation's `UUID()` opened
    /// `/dev/urandom` for every push).
    public var apnsID: String {
        let hex = rawValue.utf8.prefix(32)
        guard hex.count == 32, hex.allSatisfy(Self.isHexDigit) else {
            // Keys are SHA-256 hex; any other text is hashed into one rather than sent as is.
            return DeliveryKey(messageKey: rawValue, deviceId: "", userId: "").apnsID
        }
        return String(unsafeUninitializedCapacity: 36) { out in
            var at = 0
            for (index, digit) in hex.enumerated() {
                if index == 8 || index == 12 || index == 16 || index == 20 {
                    out[at] = UInt8(ascii: "-")
                    at += 1
                }
                out[at] =
                    switch index {
                    case 12: UInt8(ascii: "8")
                    // The variant nibble is 10xx; its low bits come from the key.
                    case 16: Self.variantDigits[Int(digit) & 0x3]
                    default: digit
                    }
                at += 1
            }
            return at
        }
    }

    private static let variantDigits = Array("89ab".utf8)

    private static func isHexDigit(_ digit: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(digit)
    }
}
