import HeraldCore

/// What an app says when it subscribes (seed 000's `Subscribe.ashx`, `/v1`): the device, and one
/// user's subscription on it. Also a row of `herald devices import`.
public struct DeviceRegistration: Sendable, Hashable {
    /// The hardware id (`"id"`), unique within ``app``.
    public var deviceId: String
    /// The app (APNs bundle id / FCM project alias); `nil` is the default app.
    public var app: String?
    public var platform: Platform
    /// The provider token (`"uri"`); `nil`, empty or `none` (seed 001, any case) means no token:
    /// the device stays known but receives nothing.
    public var token: String?
    public var culture: String
    public var userId: String
    public var zoneId: String?
    public var branchId: String?
    /// The tags subscribed to; empty means every tag. They replace the user's previous tags on
    /// this device (seed 000: "automatic unsubscription from the other tags"). Stored lowercase.
    public var tags: Set<String>

    public init(
        deviceId: String, app: String? = nil, platform: Platform, token: String?, culture: String, userId: String,
        zoneId: String? = nil, branchId: String? = nil, tags: Set<String> = []
    ) {
        self.deviceId = deviceId
        self.app = app
        self.platform = platform
        self.token = token
        self.culture = culture
        self.userId = userId
        self.zoneId = zoneId
        self.branchId = branchId
        self.tags = tags
    }

    /// The token as stored: `nil` for no token.
    var storedToken: String? { DeviceRepository.normalizedToken(token) }
}
