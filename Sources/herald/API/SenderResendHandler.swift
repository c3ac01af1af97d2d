import HeraldAPI
import HeraldCore
import HeraldDelivery

/// Sends HeraldAPI's resend pushes with a `PushSender` (the one `worker.sender` configures).
struct SenderResendHandler: ResendHandler {
    let sender: any PushSender

    func send(_ push: PushDelivery) async -> DeliveryOutcome {
        await sender.send(push)
    }
}
