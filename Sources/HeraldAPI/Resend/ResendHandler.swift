import HeraldCore

/// Sends a push again for `POST /v1/devices/{id}/notifications/resend`.
///
/// HeraldAPI decides what to send (the logged payloads, or one summary push) and builds the
/// payloads; it cannot send them itself, because it must not import HeraldDelivery. The
/// `herald` executable passes an implementation over its `PushSender` (the worker's, in
/// `herald serve`). Without one, the route answers 503 `resend_unavailable`.
///
/// Implementations are `Sendable` and never throw: every failure is a ``DeliveryOutcome``.
public protocol ResendHandler: Sendable {
    func send(_ push: ResendPush) async -> DeliveryOutcome
}

/// One push to send again (or the summary push): everything a `PushDelivery` needs.
public struct ResendPush: Sendable, Hashable {
    public var deviceId: String
    /// The user the notification was addressed to (`"0"` for a broadcast).
    public var userId: String
    public var eventId: String
    /// The logged position; `0` for the summary push, which has none.
    public var position: Int64
    /// The device's current platform, token and app.
    public var target: PushTarget
    public var payload: PushPayload

    public init(deviceId: String, userId: String, eventId: String, position: Int64, target: PushTarget, payload: PushPayload) {
        self.deviceId = deviceId
        self.userId = userId
        self.eventId = eventId
        self.position = position
        self.target = target
        self.payload = payload
    }
}
