import HeraldCore

/// One delivery the worker is about to make: what ``DeliveryJournal/claim(_:)`` takes.
public struct DeliveryClaim: Sendable, Hashable {
    public var deliveryKey: DeliveryKey
    public var messageKey: String
    /// The addressed user (`"0"` for a broadcast), as in the delivery key.
    public var userId: String
    /// The device, identified as in ``DeviceRepository``: hardware id within an app
    /// (`nil`: the default app).
    public var deviceId: String
    public var app: String?

    public init(deliveryKey: DeliveryKey, messageKey: String, userId: String, deviceId: String, app: String? = nil) {
        self.deliveryKey = deliveryKey
        self.messageKey = messageKey
        self.userId = userId
        self.deviceId = deviceId
        self.app = app
    }

    /// The claim for a selected recipient of a message.
    public init(messageKey: String, recipient: Recipient) {
        self.init(
            deliveryKey: recipient.deliveryKey(messageKey: messageKey), messageKey: messageKey,
            userId: recipient.addressedUserId, deviceId: recipient.subscription.deviceId, app: recipient.subscription.app
        )
    }
}
