/// A ready notification for one device: the exact bytes to POST and, for APNs, the headers
/// that depend on it. What the senders consume.
public struct PushPayload: Sendable, Hashable {
    public var platform: Platform
    public var profile: PayloadProfile
    /// The request body: for APNs the notification JSON; for FCM the HTTP v1 body
    /// `{"message":{…,"token":…}}`. Canonical JSON (sorted keys), valid UTF-8.
    public var body: [UInt8]
    /// The same body as a value (for logs with tokens removed, and `herald preview`).
    public var json: JSONValue
    /// APNs headers; `nil` for FCM.
    public var apns: APNsRequestOptions?
    public var deliveryKey: DeliveryKey
    /// Whether the body text was shortened to fit the provider's limit.
    public var wasShortened: Bool

    public init(platform: Platform, profile: PayloadProfile, json: JSONValue, apns: APNsRequestOptions?, deliveryKey: DeliveryKey, wasShortened: Bool) {
        self.platform = platform
        self.profile = profile
        self.json = json
        self.body = json.serialized()
        self.apns = apns
        self.deliveryKey = deliveryKey
        self.wasShortened = wasShortened
    }
}
