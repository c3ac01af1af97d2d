import HeraldSupport

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

    /// A broadcast's delivery: it waits for a lane behind targeted ones (``PerUserScheduler``).
    public var isBroadcast: Bool { addressedUserId == "0" }

    /// The key that identifies this delivery across redeliveries of the same message.
    public func deliveryKey(messageKey: String) -> DeliveryKey {
        DeliveryKey(messageKey: messageKey, deviceId: subscription.deviceId, userId: addressedUserId, app: subscription.app)
    }
}

/// The key of a per-user ordering lane (``Recipient/orderingKey``). Hashed once, when it is
/// made (``HeraldSupport/Prehashed``): the lanes look a delivery's key up several times.
public struct OrderingKey: Hashable, Sendable, CustomStringConvertible {
    private struct Fields: Hashable, Sendable {
        let userId: String
        let platform: Platform
    }

    private let key: Prehashed<Fields>

    public var userId: String { key.value.userId }
    public var platform: Platform { key.value.platform }

    public init(userId: String, platform: Platform) {
        key = Prehashed(Fields(userId: userId, platform: platform))
    }

    public var description: String { "\(userId)/\(platform)" }
}
