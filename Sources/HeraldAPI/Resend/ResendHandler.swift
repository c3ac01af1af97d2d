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
    func send(_ push: PushDelivery) async -> DeliveryOutcome
}
