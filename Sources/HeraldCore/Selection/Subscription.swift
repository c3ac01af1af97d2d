import HeraldSupport

/// One device subscribed for one user: what recipient selection works on.
///
/// A device used with two wallets has two subscriptions (seed 000's "two wallets on two
/// devices" case) and receives each wallet's events. Plain value for the store to persist.
public struct Subscription: SharedStorage, Sendable, Codable, Hashable {
    /// The subscription's properties, read and written as its own (``HeraldSupport/SharedStorage``);
    /// coded as they are, with the same keys.
    public struct Fields: Sendable, Codable, Hashable {
        /// The hardware id the app sends (`"id"` in `Subscribe.ashx`).
        public var deviceId: String
        /// The provider token (APNs device token, FCM registration token; `"uri"` in the seed).
        public var token: String
        public var platform: Platform
        /// The wallet (user) id, as in the events' `UserId` filter.
        public var userId: String
        /// The culture the user reads (`ru-RU`, `en-US`; the legacy API sends lowercase).
        public var culture: String
        public var zoneId: String?
        public var branchId: String?
        /// The tags (event categories) subscribed to. Empty means every tag (the default after a
        /// first subscription).
        public var tags: Set<String>
        /// Tags the user muted in the app's settings; they win over ``tags``.
        public var mutedTags: Set<String>
        /// The app the token belongs to: an APNs topic (bundle id) or an FCM project alias; `nil`
        /// means the installation's default app. Selects the sender's credentials.
        public var app: String?
        /// The app-wide switch ("Настройки > Уведомления"): a disabled subscription receives
        /// nothing.
        public var isEnabled: Bool
        /// The store's id of the device, when the subscription was read from the store: the
        /// worker addresses the device's journal and position counter by it without looking it up
        /// again.
        public var deviceRef: Int64?
    }

    /// Shared by every copy (``HeraldSupport/Shared``).
    public var storage: Shared<Fields>

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
