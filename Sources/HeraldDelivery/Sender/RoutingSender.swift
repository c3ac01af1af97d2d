import HeraldCore

/// Sends each delivery through the sender of its platform: APNs for `ios`, FCM for `android`.
/// The app within a platform (bundle id, Firebase project) is chosen by that sender. A platform
/// without a sender is a permanent failure for its deliveries, not a crash: an installation may
/// serve only one platform.
///
/// Thread rules: immutable and `Sendable`; the senders it holds are themselves `Sendable`.
public struct RoutingSender: PushSender {
    public let ios: (any PushSender)?
    public let android: (any PushSender)?

    public init(ios: (any PushSender)?, android: (any PushSender)?) {
        self.ios = ios
        self.android = android
    }

    public func send(_ delivery: PushDelivery) async -> DeliveryOutcome {
        guard let sender = sender(for: delivery.platform) else {
            return .permanentFailure(reason: "no \(delivery.platform == .ios ? "APNs" : "FCM") credentials are configured")
        }
        return await sender.send(delivery)
    }

    /// `.delivered` if either sender knows the delivery reached its provider, `.notDelivered` if
    /// both know it did not, `.unknown` otherwise (the provider senders cannot know).
    public func reconcile(_ deliveryKey: DeliveryKey) async -> ReconcileAnswer {
        var answers: [ReconcileAnswer] = []
        for sender in [ios, android].compactMap({ $0 }) {
            answers.append(await sender.reconcile(deliveryKey))
        }
        if answers.contains(.delivered) { return .delivered }
        if !answers.isEmpty, answers.allSatisfy({ $0 == .notDelivered }) { return .notDelivered }
        return .unknown
    }

    public func shutdown() async {
        await ios?.shutdown()
        await android?.shutdown()
    }

    public func sender(for platform: Platform) -> (any PushSender)? {
        switch platform {
        case .ios: ios
        case .android: android
        }
    }
}
