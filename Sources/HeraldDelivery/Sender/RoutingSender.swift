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
        guard let sender = sender(for: delivery.platform) else { return Self.noSender(delivery.platform) }
        return await sender.send(delivery)
    }

    /// Splits the batch by platform and hands each part to its sender in one call.
    public func submit(_ deliveries: [PushDelivery], timed completion: @escaping @Sendable (Int, DeliveryOutcome, Duration?) -> Void) {
        for platform in Platform.allCases {
            let indices = deliveries.indices.filter { deliveries[$0].platform == platform }
            guard !indices.isEmpty else { continue }
            guard let sender = sender(for: platform) else {
                for index in indices { completion(index, Self.noSender(platform), nil) }
                continue
            }
            sender.submit(indices.map { deliveries[$0] }, timed: { part, outcome, answerTime in completion(indices[part], outcome, answerTime) })
        }
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

    /// Both senders' together.
    public var concurrency: Int? {
        let parts = [ios, android].compactMap { $0?.concurrency }
        return parts.isEmpty ? nil : parts.reduce(0, +)
    }

    public func shutdown() async {
        await ios?.shutdown()
        await android?.shutdown()
    }

    private static func noSender(_ platform: Platform) -> DeliveryOutcome {
        .permanentFailure(reason: "no \(platform == .ios ? "APNs" : "FCM") credentials are configured")
    }

    public func sender(for platform: Platform) -> (any PushSender)? {
        switch platform {
        case .ios: ios
        case .android: android
        }
    }
}
