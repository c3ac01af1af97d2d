import HeraldSupport

/// A ready notification for one device: the exact bytes to POST and, for APNs, the headers
/// that depend on it. What the senders consume.
public struct PushPayload: Sendable, Hashable {
    /// What the properties below read and write.
    private struct Fields: Sendable, Hashable {
        var platform: Platform
        var profile: PayloadProfile
        var body: [UInt8]
        var apns: APNsRequestOptions?
        var deliveryKey: DeliveryKey
        var wasShortened: Bool
    }

    /// Shared by every copy (``HeraldSupport/Shared``): a payload is built into its delivery,
    /// and handed to the sender and to the journal's record.
    private var storage: Shared<Fields>

    public var platform: Platform {
        get { storage.value.platform }
        set { storage.value.platform = newValue }
    }
    public var profile: PayloadProfile {
        get { storage.value.profile }
        set { storage.value.profile = newValue }
    }
    /// The request body: for APNs the notification JSON; for FCM the HTTP v1 body
    /// `{"message":{…,"token":…}}`. Canonical JSON (sorted keys), valid UTF-8.
    public var body: [UInt8] {
        get { storage.value.body }
        set { storage.value.body = newValue }
    }
    /// APNs headers; `nil` for FCM.
    public var apns: APNsRequestOptions? {
        get { storage.value.apns }
        set { storage.value.apns = newValue }
    }
    public var deliveryKey: DeliveryKey {
        get { storage.value.deliveryKey }
        set { storage.value.deliveryKey = newValue }
    }
    /// Whether the body text was shortened to fit the provider's limit.
    public var wasShortened: Bool {
        get { storage.value.wasShortened }
        set { storage.value.wasShortened = newValue }
    }

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
        guard platform == .android else { return body }
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
        (try? JSONValue(parsing: body, maxDepth: 64)) ?? .null
    }
}
