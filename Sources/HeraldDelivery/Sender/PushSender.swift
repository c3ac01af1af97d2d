import HeraldCore

/// Where finished payloads go: APNs, FCM, a log file, or nowhere (benchmarks).
///
/// A sender classifies the provider's answer once, into a ``DeliveryOutcome``; the worker acts
/// on outcomes and never parses provider strings. Senders do not sleep and retry on their own
/// (apart from refreshing their own credentials once): they answer `.retryAfter`, and the
/// worker retries with its `RetryPolicy`, keeping the user's notifications in order.
///
/// Implementations are actors or otherwise `Sendable`, bound their in-flight requests, and
/// make callers wait (backpressure) rather than queue without limit.
public protocol PushSender: Sendable {
    /// Sends one notification. Never throws: every failure is an outcome.
    func send(_ delivery: PushDelivery) async -> DeliveryOutcome

    /// Starts sending `deliveries` and returns at once: the worker's hot path, one call per
    /// batch of released deliveries instead of one task per delivery. `completion(i, outcome,
    /// answerTime)` is called exactly once for every index `i` of `deliveries`, from any thread,
    /// as soon as that outcome is known (possibly before `submit` returns). It must be cheap and
    /// must not block: the worker only queues the outcome.
    ///
    /// `answerTime` is how long the provider took to answer, measured where the request left
    /// and the answer came (for the HTTP senders, on the wire), never including the time the
    /// delivery waited in this process (for a permit, a connection, or the caller's own turn):
    /// the worker's circuit breaker judges a provider slow by it. `nil` when nothing was sent
    /// (refused before sending, a transport error). The default runs ``send(_:)`` for each
    /// delivery in a child task of one task and times that call.
    func submit(_ deliveries: [PushDelivery], timed completion: @escaping @Sendable (Int, DeliveryOutcome, Duration?) -> Void)

    /// Whether a delivery whose outcome was lost (the worker crashed after sending, before
    /// recording) already reached the provider. A sender that cannot know answers `.unknown`,
    /// and the worker sends again with the same collapse id.
    func reconcile(_ deliveryKey: DeliveryKey) async -> ReconcileAnswer

    /// Stops the sender's connections once the worker has finished its in-flight deliveries;
    /// sends still running end with `.retryAfter`. Senders without connections do nothing.
    func shutdown() async

    /// How many requests the sender carries at once without making any wait (its connections ×
    /// the streams each opens, within its in-flight bound); nil when it has no such bound (it
    /// answers at once). The worker's default lanes (`worker.threads`): with fewer, pushes to a
    /// provider that answers after a round trip go at lanes ÷ round trip, not at what the
    /// connections carry.
    var concurrency: Int? { get }
}

extension PushSender {
    public var concurrency: Int? { nil }

    public func submit(_ deliveries: [PushDelivery], timed completion: @escaping @Sendable (Int, DeliveryOutcome, Duration?) -> Void) {
        guard !deliveries.isEmpty else { return }
        // Unstructured on purpose: `submit` returns at once and reports through `completion`;
        // the children end when their sends do, and senders bound their own in-flight requests.
        Task {
            await withDiscardingTaskGroup { group in
                for (index, delivery) in deliveries.enumerated() {
                    group.addTask {
                        let start = ContinuousClock.now
                        let outcome = await self.send(delivery)
                        completion(index, outcome, .now - start)
                    }
                }
            }
        }
    }

    /// ``submit(_:timed:)`` for callers that do not look at the answer time.
    public func submit(_ deliveries: [PushDelivery], completion: @escaping @Sendable (Int, DeliveryOutcome) -> Void) {
        submit(deliveries, timed: { index, outcome, _ in completion(index, outcome) })
    }

    public func reconcile(_ deliveryKey: DeliveryKey) async -> ReconcileAnswer { .unknown }

    public func shutdown() async {}
}

/// A sender's answer about a delivery whose outcome was lost in a crash.
public enum ReconcileAnswer: Sendable, Hashable {
    case delivered
    case notDelivered
    case unknown
}
