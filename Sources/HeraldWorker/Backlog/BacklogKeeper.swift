import HeraldCore
import HeraldStore
import Logging

/// Holds the backlog for this worker while it can (``HeraldStore/BacklogLock``) and tells the
/// engine when it takes it, loses it, or takes it back: checked every
/// ``WorkerConfiguration/backlogCheckInterval``.
///
/// A lost lock (the database restarted: the lock's session ended) first only *suspends* the
/// engine's backlog: what it knows stays, and its users' new deliveries wait, since their queued
/// ones must go first. Taken back in the next generation (nobody held it meanwhile), the engine
/// goes on where it was; taken back later, it reads the backlog anew. Held by another worker
/// for ``givenUpAfter`` checks in a row, it is forgotten, and this worker keeps its busy users'
/// deliveries in memory, as every worker did before the backlog (several workers without
/// partitions keep no order between them).
struct BacklogKeeper: Sendable {
    let lock: BacklogLock
    let backlog: DeliveryBacklog
    let engine: DeliveryEngine
    let interval: Duration
    let logger: Logger
    /// Checks that find the lock held elsewhere before a suspended backlog is forgotten.
    static let givenUpAfter = 3

    /// Tries to take the lock and tells the engine; returns the generation taken, if any.
    /// `previous`: the generation this worker held last, if it lost it.
    func acquire(after previous: Int64? = nil) async -> BacklogLock.Take {
        let take = await lock.acquire()
        guard case .held(let generation) = take else { return take }
        if let previous, generation == previous + 1 {
            engine.backlogResumed()
            return take
        }
        do {
            let queued = try await backlog.orders().compactMap { order in UserBacklogs.user(order.orderKey).map { ($0, order.lastSeq) } }
            engine.backlogAcquired(queued)
            return take
        } catch {
            // Holding the lock without knowing what is queued would keep it from everyone.
            logger.warning("Cannot read the backlog; leaving it to the next try", metadata: [LogKey.error: "\(error)"])
            await lock.release()
            return .unknown
        }
    }

    /// Checks the lock until cancelled, starting from what ``acquire(after:)`` found.
    func run(from first: BacklogLock.Take) async {
        var held: Int64? = if case .held(let generation) = first { generation } else { nil }
        var lost: Int64?  // the generation lost, while the engine's backlog is suspended
        var elsewhere = 0
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                break
            }
            if let generation = held {
                if !(await lock.isHeld()) {
                    held = nil
                    lost = generation
                    elsewhere = 0
                    engine.backlogLost()
                }
                continue
            }
            switch await acquire(after: lost) {
            case .held(let generation):
                held = generation
                lost = nil
            case .heldElsewhere:
                elsewhere += 1
                if lost != nil, elsewhere >= Self.givenUpAfter {
                    lost = nil
                    engine.backlogGone()
                }
            case .unknown:
                break
            }
        }
        await lock.close()
    }
}
