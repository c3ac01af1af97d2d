/// Where one payload goes: the device's platform and provider token, and the user it is
/// addressed to.
public struct PushTarget: Sendable, Hashable {
    public var platform: Platform
    /// APNs device token or FCM registration token.
    public var token: String
    /// Written into the payload as `userid`/`acme_userid` (`"0"` for a broadcast).
    public var userId: String
    /// The app (APNs topic / FCM project alias) the token belongs to; `nil` for the default app.
    public var app: String?

    public init(platform: Platform, token: String, userId: String, app: String? = nil) {
        self.app = app
        self.platform = platform
        self.token = token
        self.userId = userId
    }
}

extension Recipient {
    /// The payload target of this recipient.
    public var pushTarget: PushTarget {
        PushTarget(platform: subscription.platform, token: subscription.token, userId: addressedUserId, app: subscription.app)
    }
}
