import HeraldSupport

/// One device subscribed for one user: what recipient selection works on.
///
/// A device used with two wallets has two subscriptions (seed 000's "two wallets on two
/// devices" case) and receives each wallet's events. Plain value for the store to persist.
public struct Subscription: Sendable, Codable, Hashable {
    /// What the properties below read and write (coded as they are, with the same keys).
    private struct Fields: Sendable, Codable, Hashable {
        var deviceId: String
        var token: String
        var platform: Platform
        var userId: String
        var culture: String
        var zoneId: String?
        var branchId: String?
        var tags: Set<String>
        var mutedTags: Set<String>
        var app: String?
        var isEnabled: Bool
        var deviceRef: Int64?
    }

    /// Shared by every copy (``Shared``).
    private var storage: Shared<Fields>

    /// The hardware id the app sends (`"id"` in `Subscribe.ashx`).
    public var deviceId: String {
        get { storage.value.deviceId }
        set { storage.value.deviceId = newValue }
    }
    /// The provider token (APNs device token, FCM registration token; `"uri"` in the seed).
    public var token: String {
        get { storage.value.token }
        set { storage.value.token = newValue }
    }
    public var platform: Platform {
        get { storage.value.platform }
        set { storage.value.platform = newValue }
    }
    /// The wallet (user) id, as in the events' `UserId` filter.
    public var userId: String {
        get { storage.value.userId }
        set { storage.value.userId = newValue }
    }
    /// The culture the user reads (`ru-RU`, `en-US`; the legacy API sends lowercase).
    public var culture: String {
        get { storage.value.culture }
        set { storage.value.culture = newValue }
    }
    public var zoneId: String? {
        get { storage.value.zoneId }
        set { storage.value.zoneId = newValue }
    }
    public var branchId: String? {
        get { storage.value.branchId }
        set { storage.value.branchId = newValue }
    }
    /// The tags (event categories) subscribed to. Empty means every tag (the default after a
    /// first subscription).
    public var tags: Set<String> {
        get { storage.value.tags }
        set { storage.value.tags = newValue }
    }
    /// Tags the user muted in the app's settings; they win over ``tags``.
    public var mutedTags: Set<String> {
        get { storage.value.mutedTags }
        set { storage.value.mutedTags = newValue }
    }
    /// The app the token belongs to: an APNs topic (bundle id) or an FCM project alias; `nil`
    /// means the installation's default app. Selects the sender's credentials.
    public var app: String? {
        get { storage.value.app }
        set { storage.value.app = newValue }
    }
    /// The app-wide switch ("Настройки > Уведомления"): a disabled subscription receives nothing.
    public var isEnabled: Bool {
        get { storage.value.isEnabled }
        set { storage.value.isEnabled = newValue }
    }
    /// The store's id of the device, when the subscription was read from the store: the worker
    /// addresses the device's journal and position counter by it without looking it up again.
    public var deviceRef: Int64? {
        get { storage.value.deviceRef }
        set { storage.value.deviceRef = newValue }
    }

    public init(
        deviceId: String, token: String, platform: Platform, userId: String, culture: String,
        zoneId: String? = nil, branchId: String? = nil, tags: Set<String> = [], mutedTags: Set<String> = [], isEnabled: Bool = true, app: String? = nil,
        deviceRef: Int64? = nil
    ) {
        storage = Shared(
            Fields(
                deviceId: deviceId,
                token: token,
                platform: platform,
                userId: userId,
                culture: culture,
                zoneId: zoneId,
                branchId: branchId,
                tags: tags,
                mutedTags: mutedTags,
                app: app,
                isEnabled: isEnabled,
                deviceRef: deviceRef
            ))
    }

    public init(from decoder: any Decoder) throws { storage = try Shared(from: decoder) }

    public func encode(to encoder: any Encoder) throws { try storage.encode(to: encoder) }
}
