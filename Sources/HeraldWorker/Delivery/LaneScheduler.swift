import HeraldCore
import Synchronization

/// HeraldCore's ``PerUserScheduler`` behind a lock, handing released deliveries to the runner
/// through an `AsyncStream` (whose buffer is bounded by the number of lanes, since only that
/// many are released at once). Thread-safe.
final class LaneScheduler: Sendable {
    typealias Release = PerUserScheduler<ScheduledDelivery>.Release
    typealias Ticket = PerUserScheduler<ScheduledDelivery>.Ticket

    private let scheduler: Mutex<PerUserScheduler<ScheduledDelivery>>
    private let continuation: AsyncStream<Release>.Continuation
    /// Released deliveries, in release order; ends after ``finish()``.
    let releases: AsyncStream<Release>

    init(lanes: Int) {
        scheduler = Mutex(PerUserScheduler(lanes: lanes))
        (releases, continuation) = AsyncStream.makeStream(of: Release.self)
    }

    /// Enqueues deliveries in order, each in the lane of its user.
    func enqueue(_ deliveries: [ScheduledDelivery]) {
        scheduler.withLock { scheduler in
            for delivery in deliveries {
                for release in scheduler.enqueue(delivery, user: delivery.recipient.orderingKey) {
                    continuation.yield(release)
                }
            }
        }
    }

    /// The delivery of `ticket` is terminal: its user's next delivery (or another user's) may go.
    func complete(_ ticket: Ticket) {
        scheduler.withLock { scheduler in
            // A ticket completed twice would be a bug here; the scheduler refuses it without
            // corrupting the order, and nothing more can be done about it at run time.
            guard let released = try? scheduler.complete(ticket) else { return }
            for release in released { continuation.yield(release) }
        }
    }

    /// Ends ``releases``; deliveries still waiting are never released.
    func finish() { continuation.finish() }
}
