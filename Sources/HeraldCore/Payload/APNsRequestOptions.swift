/// The APNs request headers that depend on the notification (the topic comes from
/// configuration, the authorization from the token provider).
public struct APNsRequestOptions: Sendable, Hashable {
    /// `apns-push-type`.
    public var pushType: APNsPushType
    /// `apns-priority`: 10 (immediately) or 5 (power-considerate; required for background).
    public var priority: Int
    /// `apns-expiration` in seconds since 1970, or `nil` to omit the header.
    public var expiration: Int?
    /// `apns-collapse-id` (≤ 64 bytes): the delivery key.
    public var collapseId: String

    public init(pushType: APNsPushType, priority: Int, expiration: Int?, collapseId: String) {
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseId = collapseId
    }
}
