import HeraldCore
import HeraldStore

/// The per-user backlog with partitions: a partition's owner queues and sends the backlog of
/// that partition's users (``UserBacklogs/scope(of:)``), so the backlog moves with the partition.
///
/// Taken before the partition's consumer starts (its queued users are read and handed to the
/// engine, so that a user's new deliveries go behind its queued ones). Handed over in step with
/// the partition (``PartitionOwnership``): the engine stops taking from it, the handover waits
/// until what it had in the lanes is answered, then the engine forgets it, before the lock goes.
struct PartitionBacklogs: Sendable {
    let backlog: DeliveryBacklog
    let engine: DeliveryEngine
    let layout: PartitionLayout

    /// Reads `partition`'s queued users (the table's orders, filtered by partition) and gives
    /// the engine its backlog.
    func take(_ partition: Int) async throws(StoreError) {
        let queued = try await backlog.orders().compactMap { order -> (user: OrderingKey, lastSeq: Int64)? in
            guard let user = UserBacklogs.user(order.orderKey), layout.partition(ofUser: user.userId) == partition else { return nil }
            return (user, order.lastSeq)
        }
        engine.backlogAcquired(queued, scope: partition)
    }

    /// The handover began: nothing more of `partition`'s backlog goes to the lanes.
    func leave(_ partition: Int) { engine.backlogLeaving(scope: partition) }

    /// Whether `partition`'s backlog, being left, has nothing in the lanes any more.
    func hasLeft(_ partition: Int) -> Bool { engine.hasLeft(scope: partition) }

    /// Another process owns `partition` now (or will): the engine forgets its backlog.
    func gone(_ partition: Int) { engine.backlogGone(scope: partition) }
}
