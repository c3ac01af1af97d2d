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

    /// Reads the queued users of `partitions` (the table's orders, in one read, sorted by
    /// partition) and gives the engine each one's backlog.
    func take(_ partitions: [Int]) async throws(StoreError) {
        guard !partitions.isEmpty else { return }
        var queued: [Int: [(user: OrderingKey, lastSeq: Int64)]] = Dictionary(uniqueKeysWithValues: partitions.map { ($0, []) })
        for order in try await backlog.orders() {
            guard let user = UserBacklogs.user(order.orderKey) else { continue }
            queued[layout.partition(ofUser: user.userId)]?.append((user, order.lastSeq))
        }
        for partition in partitions { engine.backlogAcquired(queued[partition] ?? [], scope: partition) }
    }

    /// The handover began: nothing more of `partition`'s backlog goes to the lanes.
    func leave(_ partition: Int) { engine.backlogLeaving(scope: partition) }

    /// Whether `partition`'s backlog, being left, has nothing in the lanes any more.
    func hasLeft(_ partition: Int) -> Bool { engine.hasLeft(scope: partition) }

    /// Another process owns `partition` now (or will): the engine forgets its backlog.
    func gone(_ partition: Int) { engine.backlogGone(scope: partition) }
}
