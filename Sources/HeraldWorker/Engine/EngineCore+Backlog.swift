import HeraldCore
import Logging

/// The per-user backlog (``UserBacklogs``): what is queued, when it is written, and when it
/// comes back to the lanes.
extension EngineCore {
    /// Queues `delivery` in its user's backlog: written with the next backlog write; its message
    /// is settled once the row is durable. When the user's backlog begins, the user's deliveries
    /// waiting in the lanes are queued first: a user with a backlog has nothing in memory but
    /// what is in flight, so after a crash nothing but that can come back behind its queued ones.
    mutating func queueInBacklog(_ delivery: Delivery, user: OrderingKey) {
        if !backlog.has(user) {
            for waiting in scheduler.removeWaiting(user: user) { queue(waiting, in: user) }
        }
        queue(delivery, in: user)
    }

    mutating func queue(_ delivery: Delivery, in user: OrderingKey) {
        delivery.backlogPlace = backlog.place(for: user)
        backlogWrites.append(delivery)
        running += 1  // until durable
        metrics.queued()
    }

    /// One backlog write at a time, of everything queued meanwhile: places are numbered in
    /// arrival order, so a later write never overtakes an earlier one's order.
    mutating func writeBacklog() {
        guard !backlogWriting, !backlogWrites.isEmpty else { return }
        actions.backlogWrite = backlogWrites
        backlogWrites.removeAll()
        backlogWriting = true
    }

    mutating func backlogWritten(_ deliveries: [Delivery], durable: Bool) {
        backlogWriting = false
        running -= deliveries.count
        guard durable else {
            abandonBacklogWrites(deliveries)
            return
        }
        for delivery in deliveries {
            delivery.hasPendingRow = true  // the `.queued` journal row
            backlogTouched.insert(delivery.recipient.orderingKey)
        }
        actions.settlements.append(.finish(deliveries))
        backlog.written(deliveries)
    }

    /// Deliveries whose backlog write did not happen (stopping) or was given up (aborting): their
    /// messages are not acknowledged and come again.
    mutating func abandonBacklogWrites(_ deliveries: [Delivery]) {
        backlog.notWritten(deliveries)
        actions.settlements.append(.drop(deliveries))
    }

    /// Queues `scope`'s deliveries held back while the lock was away, in arrival order (behind
    /// their users' queued ones).
    mutating func queueHeldBack(_ scope: Int) {
        guard !turn.stopping else { return }
        for delivery in takeHeldBack(scope: scope) { queueInBacklog(delivery, user: delivery.recipient.orderingKey) }
    }

    /// Removes and returns `scope`'s held-back deliveries, in arrival order.
    mutating func takeHeldBack(scope: Int) -> [Delivery] {
        guard !heldBack.isEmpty else { return [] }
        var taken: [Delivery] = [], kept: [Delivery] = []
        for delivery in heldBack {
            if backlog.scope(of: delivery.recipient.orderingKey) == scope { taken.append(delivery) } else { kept.append(delivery) }
        }
        heldBack = kept
        return taken
    }

    /// `scope`'s partition is being handed over: nothing more of its backlog goes to the lanes,
    /// and its deliveries waiting here for a retry are dropped (the next owner sends them from
    /// their rows).
    mutating func backlogLeaving(_ scope: Int, released: inout [Lanes.Release]) {
        backlog.leave(scope: scope)
        let partitions = settings.partitions
        for delivery in parked.removeAll(where: {
            $0.backlogPlace != nil && UserBacklogs.scope(of: $0.recipient.orderingKey, partitions: partitions) == scope
        }) {
            delivery.retryDue = nil
            complete(delivery, released: &released)
            waitingChanged = true
        }
    }

    /// Hands the lanes the next queued delivery of each user looked at this turn whose lanes hold
    /// nothing else of it, and asks for the reads they need (then those of users whose read waited).
    mutating func feedFromBacklog(released: inout [Lanes.Release]) {
        guard !backlogTouched.isEmpty, backlog.holdsAny else { return }
        var users = Array(backlogTouched)
        backlogTouched.removeAll()
        guard !turn.stopping else { return }
        var reads: [UserBacklogs.Read] = []
        var index = 0
        while index < users.count {
            let user = users[index]
            index += 1
            let idle = !scheduler.isRunning(user: user) && scheduler.waitingCount(user: user) == 0
            for delivery in backlog.take(for: user, room: idle ? 1 : 0) {
                scheduler.enqueue(delivery, user: user, isBulk: delivery.recipient.isBroadcast, into: &released)
            }
            if let read = backlog.readNeeded(for: user) { reads.append(read) }
            backlog.endIfDone(user)
            if index == users.count { users += backlog.usersWaitingForRead() }
        }
        for start in stride(from: 0, to: reads.count, by: UserBacklogs.readBatch) {
            actions.backlogReads.append(Array(reads[start..<min(reads.count, start + UserBacklogs.readBatch)]))
        }
    }

    func backlogMetadata(_ scope: Int, count: Int?) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        if let count { metadata[LogKey.count] = "\(count)" }
        if settings.partitions > 0 { metadata[LogKey.partition] = "\(scope)" }
        return metadata
    }
}
