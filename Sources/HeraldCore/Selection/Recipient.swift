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

    /// The key of the per-user ordering lane: the subscription's user, so that a broadcast is
    /// ordered with the rest of that user's notifications.
    public var orderingKey: String { subscription.userId }

    /// The key that identifies this delivery across redeliveries of the same message.
    public func deliveryKey(messageKey: String) -> DeliveryKey {
        DeliveryKey(messageKey: messageKey, deviceId: subscription.deviceId, userId: addressedUserId, app: subscription.app)
    }
}
