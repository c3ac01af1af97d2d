import HeraldCore
import Logging

extension Logger {
    /// One debug line for a provider's answer other than "sent" (the worker logs what it does
    /// about it; this is the provider-level detail).
    func debugRefusal(_ message: Logger.Message, delivery: PushDelivery, outcome: DeliveryOutcome) {
        debug(message, metadata: [
            "herald.delivery_key": "\(delivery.deliveryKey)", "herald.token": "\(TokenRedaction.short(delivery.target.token))",
            "herald.outcome": "\(outcome)",
        ])
    }
}
