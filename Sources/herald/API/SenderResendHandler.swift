import HeraldAPI
import HeraldCore
import HeraldDelivery

/// Sends HeraldAPI's resend pushes with a `PushSender` (the one `worker.sender` configures).
struct SenderResendHandler: ResendHandler {
    let sender: any PushSender

    func send(_ push: ResendPush) async -> DeliveryOutcome {
        await sender.send(
            PushDelivery(
                deliveryKey: push.payload.deliveryKey, deviceId: push.deviceId, userId: push.userId, eventId: push.eventId,
                position: push.position, target: push.target, payload: push.payload
            ))
    }
}
