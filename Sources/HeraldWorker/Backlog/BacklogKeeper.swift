import HeraldCore
import HeraldStore
import Logging

/// Holds the backlog for this worker while it can (``HeraldStore/BacklogLock``) and tells the
/// engine when it takes it or loses it: checked every ``WorkerConfiguration/backlogCheckInterval``.
/// Another worker holding it is not an error: this one then keeps its busy users' deliveries in
/// memory, as every worker did before the backlog, and takes the backlog over when it is free.
struct BacklogKeeper: Sendable {
    let lock: BacklogLock
    let backlog: DeliveryBacklog
    let engine: DeliveryEngine
    let interval: Duration
    let logger: Logger

    /// Takes the lock if it is free and hands the engine what is queued; true if held.
    func acquire() async -> Bool {
        guard await lock.acquire() else { return false }
        do {
            let queued = try await backlog.orders().compactMap { order in UserBacklogs.user(order.orderKey).map { ($0, order.lastSeq) } }
            engine.backlogAcquired(queued)
            return true
        } catch {
            // Holding the lock without knowing what is queued would keep it from everyone.
            logger.warning("Cannot read the backlog; leaving it to the next try", metadata: [LogKey.error: "\(error)"])
            await lock.release()
            return false
        }
    }

    /// Checks the lock until cancelled: tells the engine when it is lost, and takes it when free.
    func run(holding: Bool) async {
        var holding = holding
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                break
            }
            if holding {
                if !(await lock.isHeld()) {
                    holding = false
                    engine.backlogLost()
                }
            } else {
                holding = await acquire()
            }
        }
        await lock.close()
    }
}
