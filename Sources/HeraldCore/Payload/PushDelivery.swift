/// One notification for one device, ready to send: what HeraldDelivery's `PushSender` receives,
/// from the worker's engine and from the API's resend route alike.
public struct PushDelivery: Sendable, Hashable {
    public var deliveryKey: DeliveryKey
    public var deviceId: String
    /// The user the notification is addressed to (`"0"` for a broadcast).
    public var userId: String
    public var eventId: String
    /// The device's notification-log position (seed 002).
    public var position: Int64
    /// Platform, token and app of the device.
    public var target: PushTarget
    /// The exact body and, for APNs, the headers that depend on it.
    public var payload: PushPayload

    public init(
        deliveryKey: DeliveryKey, deviceId: String, userId: String, eventId: String, position: Int64,
        target: PushTarget, payload: PushPayload
    ) {
        self.deliveryKey = deliveryKey
        self.deviceId = deviceId
        self.userId = userId
        self.eventId = eventId
        self.position = position
        self.target = target
        self.payload = payload
    }

    /// A push whose collapse id is its payload's (``PushPayload/deliveryKey``): a logged payload
    /// sent again, a summary or badge push.
    public init(deviceId: String, userId: String, eventId: String, position: Int64, target: PushTarget, payload: PushPayload) {
        self.init(
            deliveryKey: payload.deliveryKey, deviceId: deviceId, userId: userId, eventId: eventId, position: position, target: target,
            payload: payload)
    }

    public var platform: Platform { target.platform }
}
