import HeraldSupport

/// A ready notification for one device: the exact bytes to POST and, for APNs, the headers
/// that depend on it. What the senders consume.
public struct PushPayload: SharedStorage, Sendable, Hashable {
    /// The payload's properties, read and written as its own (``HeraldSupport/SharedStorage``).
    public struct Fields: Sendable, Hashable {
        public var platform: Platform
        public var profile: PayloadProfile
        /// The request body: for APNs the notification JSON; for FCM the HTTP v1 body
        /// `{"message":{…,"token":…}}`. Canonical JSON (sorted keys), valid UTF-8.
        public var body: [UInt8]
        /// APNs headers; `nil` for FCM.
        public var apns: APNsRequestOptions?
        public var deliveryKey: DeliveryKey
        /// Whether the body text was shortened to fit the provider's limit.
        public var wasShortened: Bool
    }

    /// Shared by every copy (``HeraldSupport/Shared``): a payload is built into its delivery,
    /// and handed to the sender and to the journal's record.
    public var storage: Shared<Fields>

    public init(platform: Platform, profile: PayloadProfile, body: [UInt8], apns: APNsRequestOptions?, deliveryKey: DeliveryKey, wasShortened: Bool) {
        storage = Shared(Fields(platform: platform, profile: profile, body: body, apns: apns, deliveryKey: deliveryKey, wasShortened: wasShortened))
    }

    /// The payload whose body is `json`, serialized canonically.
    public init(platform: Platform, profile: PayloadProfile, json: JSONValue, apns: APNsRequestOptions?, deliveryKey: DeliveryKey, wasShortened: Bool) {
        self.init(platform: platform, profile: profile, body: json.serialized(), apns: apns, deliveryKey: deliveryKey, wasShortened: wasShortened)
    }

    /// What the notification log keeps of the body: the body itself, less the FCM
    /// registration token (the last member of `message` in the canonical form), because the log
    /// keeps no device tokens; a resend puts the device's current token back.
    public var loggedBody: [UInt8] {
        let body = self.body
        guard self.platform == .android else { return body }
        let marker = Self.tokenMarker
        let closing = UInt8(ascii: "}")
        guard body.count > marker.count + 2, body[body.count - 1] == closing, body[body.count - 2] == closing else { return body }
        return body.withUnsafeBufferPointer { bytes in
            var start = bytes.count - 2 - marker.count
            while start >= 0 {
                if bytes[start] == marker[0], UnsafeBufferPointer(rebasing: bytes[start..<(start + marker.count)]).elementsEqual(marker) {
                    var logged: [UInt8] = []
                    logged.reserveCapacity(start + 2)
                    logged.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<start]))
                    logged.append(closing)
                    logged.append(closing)
                    return logged
                }
                start -= 1
            }
            return body
        }
    }

    private static let tokenMarker = Array(#","token":""#.utf8)

    /// The body as a value, parsed on demand (for `herald preview` and logs; the hot path never
    /// needs it).
    public var json: JSONValue {
        (try? JSONValue(parsing: self.body, maxDepth: 64)) ?? .null
    }
}
