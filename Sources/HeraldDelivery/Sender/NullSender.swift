import HeraldCore
import Synchronization

/// Accepts everything at once and only counts: the benchmark's sender, so that the pipeline
/// is measured without any provider in the way.
public final class NullSender: PushSender {
    private let sent = Atomic<Int>(0)

    public init() {}

    public func send(_ delivery: PushDelivery) async -> DeliveryOutcome {
        sent.add(1, ordering: .relaxed)
        return .sent
    }

    /// Answers every delivery at once, on the caller's thread.
    public func submit(_ deliveries: [PushDelivery], timed completion: @escaping @Sendable (Int, DeliveryOutcome, Duration?) -> Void) {
        sent.add(deliveries.count, ordering: .relaxed)
        for index in deliveries.indices { completion(index, .sent, .zero) }
    }

    /// Deliveries accepted so far.
    public var count: Int { sent.load(ordering: .relaxed) }
}
