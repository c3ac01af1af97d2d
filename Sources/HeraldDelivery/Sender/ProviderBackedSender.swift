import HeraldCore

/// A provider's public sender (``APNsSender``, ``FCMSender``): what it adds to the shared
/// ``ProviderSender`` is its configuration and how it loads it; the ``PushSender`` calls below
/// are the core's, written once here rather than forwarded by each sender. (A member that is not
/// a ``PushSender`` requirement, such as `statistics`, would be internal here: each sender
/// declares its own.)
protocol ProviderBackedSender: PushSender {
    associatedtype Provider: PushProvider
    var core: ProviderSender<Provider> { get }
}

extension ProviderBackedSender {
    public func send(_ delivery: PushDelivery) async -> DeliveryOutcome { await core.send(delivery) }

    public func submit(_ deliveries: [PushDelivery], timed completion: @escaping @Sendable (Int, DeliveryOutcome, Duration?) -> Void) {
        core.submit(deliveries, completion: completion)
    }

    public var concurrency: Int? { core.concurrency }

    /// Stops the HTTP clients; sends in flight end with `.retryAfter`.
    public func shutdown() async { await core.shutdown() }
}
