import HeraldCore
import Logging

extension Logger {
    /// One debug line for a provider's answer other than "sent" (the worker logs what it does
    /// about it; this is the provider-level detail).
    func debugRefusal(_ message: Logger.Message, delivery: PushDelivery, outcome: DeliveryOutcome) {
        debug(
            message,
            metadata: [
                LogKey.deliveryKey: "\(delivery.deliveryKey)", LogKey.token: "\(LogKey.shortToken(delivery.target.token))",
                LogKey.outcome: "\(outcome)",
            ])
    }
}
