/// One selected delivery target: a subscription and the user the notification is addressed to.
public struct Recipient: Sendable, Codable, Hashable {
    public var subscription: Subscription
    /// The user written into the payload (`userid`/`acme_userid`) and into the delivery key: the
    /// subscription's user for a targeted event, `"0"` for a broadcast (which reaches each
    /// device once, whatever number of users it is subscribed for).
    public var addressedUserId: String

    public init(subscription: Subscription, addressedUserId: String) {
        self.subscription = subscription
        self.addressedUserId = addressedUserId
    }

    /// Whose notifications must stay in order with this one: the subscription's user (so that a
    /// broadcast is ordered with the rest of that user's notifications) on this device's
    /// platform. Order is per user and platform, not per user: one provider's outage must not
    /// hold the user's notifications to the other provider (docs/architecture.md).
    public var orderingKey: OrderingKey { OrderingKey(userId: subscription.userId, platform: subscription.platform) }

    /// The key that identifies this delivery across redeliveries of the same message.
    public func deliveryKey(messageKey: String) -> DeliveryKey {
        DeliveryKey(messageKey: messageKey, deviceId: subscription.deviceId, userId: addressedUserId, app: subscription.app)
    }
}

/// The key of a per-user ordering lane (``Recipient/orderingKey``).
///
/// Its hash is computed once, when it is made: the lanes' tables look a delivery's key up
/// about seven times between its arrival and its end, and hashing the user id each time was
/// most of the lanes' cost.
public struct OrderingKey: Hashable, Sendable, CustomStringConvertible {
    public let userId: String
    public let platform: Platform
    private let hash: Int

    public init(userId: String, platform: Platform) {
        self.userId = userId
        self.platform = platform
        var hasher = Hasher()
        hasher.combine(userId)
        hasher.combine(platform)
        hash = hasher.finalize()
    }

    public static func == (lhs: OrderingKey, rhs: OrderingKey) -> Bool {
        lhs.hash == rhs.hash && lhs.platform == rhs.platform && lhs.userId == rhs.userId
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    public var description: String { "\(userId)/\(platform)" }
}
