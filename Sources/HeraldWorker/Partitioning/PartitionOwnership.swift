import HeraldAMQP
import HeraldCore
import HeraldStore
import Logging
import Synchronization

/// The partition consumers of one broker session, started and handed over as this process's
/// fair share says (``PartitionShare``, read from ``HeraldStore/PartitionLocks``).
///
/// Every ``WorkerConfiguration/partitionBalanceInterval`` (jittered ±20 %) it reads the locks,
/// joins as a member if it is not one (and then takes no free partition before its next look),
/// and:
/// - consumes each partition whose lock it holds (a partition is consumed only after its lock is
///   taken, so the last owner has handed it over or is gone);
/// - hands over a partition it consumes whose lock it no longer holds (its database session was
///   lost and another process took the lock meanwhile; if nobody did, it takes it back);
/// - takes free partitions up to its share, and hands over those beyond it.
///
/// A handover keeps each user's order: the partition's consumer stops feeding the pipeline (what
/// it receives from then on stays unacknowledged in its channel), every message of that queue
/// already in the pipeline is settled (at most ``WorkerConfiguration/partitionHandoverTimeout``;
/// those still unsettled then are forgotten, as after a lost connection), then its channel is
/// closed without cancelling first (``HeraldAMQP/AMQPConsumer/close()``: the broker requeues the
/// rest at their places), and only then is the lock released. The partition's backlog goes with
/// it (``PartitionBacklogs``): taken before its consumer starts; at a handover nothing more of it
/// goes to the lanes, what is there is answered within the same timeout, and it is forgotten
/// before the lock is released. Single active consumer on every
/// partition queue stays the broker-side guard: should two processes consume one queue, one of
/// them stands by.
///
/// Thread rules: ``run(connection:session:inbox:)`` is called once per session by the worker;
/// the rest is private to that task.
struct PartitionOwnership: Sendable {
    let layout: PartitionLayout
    let locks: PartitionLocks
    let configuration: WorkerConfiguration
    let tracker: MessageTracker
    let metrics: WorkerMetrics
    let owned: OwnedPartitions
    /// Nil when `worker.backlog` is off.
    let backlogs: PartitionBacklogs?
    let stop: StopSignal
    let logger: Logger
    /// Feeds one partition consumer's deliveries into the pipeline until its stream ends; must
    /// register and put a batch only through ``PartitionGate/admit(_:)``.
    let pump: @Sendable (_ consumer: AMQPConsumer, _ partition: Int, _ gate: PartitionGate) async -> Void

    /// A running partition consumer.
    private struct Reader {
        let consumer: AMQPConsumer
        let gate: PartitionGate
    }

    /// Balances until the session ends (stopping, or `inbox` ended because a consumer failed:
    /// the caller cancels this task). The locks are left held: the caller releases them once
    /// the connection is closed.
    func run(connection: AMQPConnection, session: UInt64, inbox: MessageInbox) async {
        await withDiscardingTaskGroup { group in
            var readers: [Int: Reader] = [:]
            var unreachableSince: ContinuousClock.Instant?
            while !stop.isStopping, !Task.isCancelled {
                do throws(StoreError) {
                    try await balance(&readers, group: &group, connection: connection, session: session, inbox: inbox)
                    if unreachableSince != nil {
                        unreachableSince = nil
                        logger.info("Partition locks readable again", metadata: [LogKey.queue: "\(layout.topology.queue)"])
                    }
                } catch {
                    let now = ContinuousClock.now, since = unreachableSince ?? now
                    if unreachableSince == nil {
                        unreachableSince = now
                        logger.warning(
                            "Cannot read the partition locks; keeping the partitions this worker consumes for now",
                            metadata: [LogKey.error: "\(error)", LogKey.queue: "\(layout.topology.queue)"])
                    }
                    if now - since >= configuration.partitionUnreachableLimit, !readers.isEmpty {
                        // Cut from the database: its lock session is gone or going, and the
                        // processes that still reach it take the partitions once we let go.
                        logger.warning(
                            "Partition locks unreadable too long; handing over every partition this worker consumes",
                            metadata: [LogKey.count: "\(readers.count)", LogKey.queue: "\(layout.topology.queue)"])
                        _ = await handOver(readers.keys.sorted(), &readers, session: session)
                    }
                }
                owned.set(Set(readers.keys), logger: logger, layout: layout)
                guard await stop.sleep(for: configuration.partitionBalanceInterval.jittered) else { break }
            }
            // The session ends: its locks go once the connection is closed.
            for partition in readers.keys { backlogs?.gone(partition) }
        }
        owned.set([], logger: logger, layout: layout)
    }

    /// One look at the locks and what follows from it.
    private func balance(
        _ readers: inout [Int: Reader], group: inout DiscardingTaskGroup, connection: AMQPConnection, session: UInt64, inbox: MessageInbox
    ) async throws(StoreError) {
        // A process that owns nothing has no consumer to notice a lost connection: end the
        // session here, so that it releases its member lock and reconnects.
        guard connection.isOpen else {
            inbox.end(error: AMQPError(code: .connectionLost, call: "partition balance", message: "the worker's broker connection is gone"))
            return
        }
        var view = try await locks.view()
        let joining = !view.members.contains(view.me)
        if joining {
            guard try await locks.join() else { return }
            view = try await locks.view()
        }
        // Consumed without the lock: take it back if it is free, else hand the partition over.
        var lost: [Int] = [], retaken: [Int] = []
        for partition in readers.keys.sorted() where view.owners[partition] != view.me {
            if view.owners[partition] == nil, try await locks.take(partition) {
                view.owners[partition] = view.me
                retaken.append(partition)
            } else {
                lost.append(partition)
            }
        }
        // Another process may have held them meanwhile: their backlog is read anew.
        try await backlogs?.take(retaken)
        guard await handOver(lost, &readers, session: session) else { return }
        // Held without a consumer (a lock kept from the last session).
        let held = view.mine.sorted().filter { readers[$0] == nil }
        guard await start(held, &readers, group: &group, connection: connection, inbox: inbox) else { return }
        // Just joined (started, reconnected, or the database restarted and every session with
        // it): the others take theirs back first, and see this one as a member, before it
        // takes free partitions at its next look.
        if joining { return }
        switch PartitionShare.step(view, partitions: layout.count) {
        case .stay:
            break
        case .release(let partitions):
            guard await handOver(partitions, &readers, session: session) else { return }
            for partition in partitions { try await locks.release(partition) }
        case .take(let count, let free):
            var taken: [Int] = []
            for partition in free.shuffled() where taken.count < count {
                if try await locks.take(partition) { taken.append(partition) }
            }
            guard await start(taken, &readers, group: &group, connection: connection, inbox: inbox) else { return }
        }
    }

    /// Consumes the queues of `partitions`, whose locks this process holds, after reading their
    /// backlog (one read for them all). False when the broker refused (the session then ends:
    /// the locks are released with the others).
    private func start(
        _ partitions: [Int], _ readers: inout [Int: Reader], group: inout DiscardingTaskGroup, connection: AMQPConnection, inbox: MessageInbox
    ) async -> Bool {
        guard !partitions.isEmpty else { return true }
        do throws(StoreError) {
            // Before the first message: a busy user's queued deliveries go before its new ones.
            try await backlogs?.take(partitions)
        } catch {
            logger.warning(
                "Cannot read the partitions' backlog; leaving them to the next look",
                metadata: [LogKey.error: "\(error)", LogKey.queue: "\(partitions.map(layout.queueName).joined(separator: ","))"])
            for partition in partitions { try? await locks.release(partition) }
            return true
        }
        for partition in partitions {
            let consumer: AMQPConsumer
            do {
                consumer = try await connection.consume(queue: layout.queueName(partition), prefetch: configuration.prefetch)
            } catch {
                inbox.end(error: error)
                return false
            }
            let gate = PartitionGate()
            readers[partition] = Reader(consumer: consumer, gate: gate)
            group.addTask { await pump(consumer, partition, gate) }
        }
        return true
    }

    /// Hands `partitions` over together (see the type's documentation); their locks stay for the caller.
    /// False when stopping or cancelled meanwhile (the session's end closes the connection).
    private func handOver(_ partitions: [Int], _ readers: inout [Int: Reader], session: UInt64) async -> Bool {
        let leaving = partitions.compactMap { partition in readers.removeValue(forKey: partition).map { (partition, $0) } }
        guard !leaving.isEmpty else { return true }
        for (partition, reader) in leaving {
            reader.gate.close()
            backlogs?.leave(partition)
        }
        defer { for (partition, _) in leaving { backlogs?.gone(partition) } }
        let queues = leaving.map { layout.queueName($0.0) }
        let names = queues.joined(separator: ",")
        func settled() -> Bool {
            queues.allSatisfy { tracker.unsettledCount(session: session, queue: $0) == 0 }
                && leaving.allSatisfy { backlogs?.hasLeft($0.0) ?? true }
        }
        let deadline = ContinuousClock.now + configuration.partitionHandoverTimeout
        guard await tracker.changes.wait(for: settled, until: deadline, stop: stop) != .stopped else { return false }
        if let backlogs, !leaving.allSatisfy({ backlogs.hasLeft($0.0) }) {
            logger.warning(
                "Partition handed over with a queued delivery still unanswered; the next owner may send it again",
                metadata: [LogKey.queue: "\(names)"])
        }
        let forgotten = queues.reduce(0) { $0 + tracker.forgetSession(session, queue: $1) }
        if forgotten > 0 {
            metrics.requeued(forgotten)
            logger.warning(
                "Partition handed over with messages not settled in time; they go back to their queue",
                metadata: [LogKey.queue: "\(names)", LogKey.count: "\(forgotten)"])
        } else {
            // A settled message's acknowledgement is handed to the connection just after the
            // tracker lets it go (a deferred one's after its copy is confirmed): let it go out
            // before the channel closes, or the message would be delivered again (and skipped).
            guard await stop.sleep(for: Self.acknowledgementGrace) else { return false }
        }
        for (_, reader) in leaving { try? await reader.consumer.close() }
        return !stop.isStopping && !Task.isCancelled
    }

    static let acknowledgementGrace: Duration = .milliseconds(100)
}

/// Whether a partition consumer still feeds the pipeline: closed when its partition is being
/// handed over, atomically with the registration of a batch, so that once closed every message
/// of that queue in the pipeline is known to the tracker. Thread-safe.
final class PartitionGate: Sendable {
    private let closed = Mutex(false)

    /// Runs `register` unless closed; false when closed (the batch is dropped: it stays
    /// unacknowledged and is requeued when the channel closes).
    func admit(_ register: () -> Void) -> Bool {
        closed.withLock { closed in
            guard !closed else { return false }
            register()
            return true
        }
    }

    func close() { closed.withLock { $0 = true } }
    var isClosed: Bool { closed.withLock { $0 } }
}

/// The partitions this process consumes now (``WorkerService/ownedPartitions``); every change is
/// logged once ("Consuming partitions", `herald.partitions_owned`). Thread-safe.
final class OwnedPartitions: Sendable {
    private let partitions = Mutex<Set<Int>>([])

    var current: Set<Int> { partitions.withLock { $0 } }

    func set(_ new: Set<Int>, logger: Logger, layout: PartitionLayout) {
        let changed = partitions.withLock { current in
            defer { current = new }
            return current != new
        }
        guard changed else { return }
        logger.info(
            "Consuming partitions",
            metadata: [
                LogKey.partitionsOwned: "\(new.sorted().map(String.init).joined(separator: ","))", LogKey.partitions: "\(layout.count)",
            ])
    }
}

extension PartitionLayout {
    /// The advisory-lock namespaces of this installation: from its queue name, so that two
    /// installations sharing a database do not meet.
    var lockKeys: PartitionLocks.Keys {
        let members = Int32(truncatingIfNeeded: PartitionHash.fnv1a64("herald.partitions:\(topology.queue)") & 0x7fff_fffe)
        return PartitionLocks.Keys(members: members, partitions: members | 1)
    }
}
