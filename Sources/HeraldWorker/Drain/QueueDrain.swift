import HeraldAMQP
import HeraldCore
import HeraldStore
import Logging

/// Seed 000's procedure before a message-format change, as one command (`herald drain`): run
/// the worker until the queue is empty and every delivery in flight is terminal, then stop it
/// gracefully.
///
/// A monitor polls the queue depth (a passive declare on its own connection) and the worker's
/// in-flight counts. The drain is complete after two consecutive polls see an empty queue,
/// a consuming worker and nothing in flight (two, so that a message on its way from the broker
/// to the worker is not missed). Producers should be stopped first, or the queue may never stay
/// empty.
///
/// The depth counts the wait queues too (`<queue>.wait`: deliveries deferred while their
/// provider fails), and the drain waits for the backlog table to be empty (deliveries queued
/// behind busy users or a failing provider, whose messages were acknowledged) and for every
/// broadcast sent in windows to be done, so a drain is not
/// complete while anything is owed. With partitions (``WorkerConfiguration/partitions`` > 0) the depth is the sum of the main
/// queue and every partition queue (and their wait queues), and the drain's worker takes the ingest and the partitions
/// only where no other process holds them. If other workers still run, it may own none of them
/// and then only watches: a passive declare counts *ready* messages, not those another process
/// holds unacknowledged, so stop the other workers first for a drain that proves everything was
/// delivered (it then owns everything once their connections are gone).
public enum QueueDrain {
    /// Runs `worker` (which must not be running yet) until the queue is drained or `timeout`
    /// passes, calling `progress` after every poll. Returns the final progress; its
    /// `isComplete` is false after a timeout (the worker is stopped either way).
    public static func run(
        worker: WorkerService, timeout: Duration, pollInterval: Duration = .milliseconds(250), logger: Logger = Logger(label: "herald.drain"),
        progress: @escaping @Sendable (DrainProgress) -> Void = { _ in }
    ) async -> DrainProgress {
        let started = ContinuousClock.now
        let queues = [worker.configuration.topology.queue] + (worker.configuration.partitionLayout?.queueNames ?? [])
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await worker.run()
                } catch {
                    logger.error("Worker failed during drain", metadata: [LogKey.error: "\(error)"])
                }
            }
            var monitor: AMQPConnection?
            var quietPolls = 0
            var last = DrainProgress(
                queueDepth: nil, queuedInBacklog: nil, broadcastsUnderWay: nil, statistics: worker.statistics, elapsed: .zero, isComplete: false)
            while !Task.isCancelled {
                try? await Task.sleep(for: pollInterval)
                var depth: Int?
                do {
                    if monitor == nil || monitor?.isOpen == false {
                        monitor = try await AMQPConnection.connect(worker.configuration.amqp, logger: logger)
                    }
                    var total = 0
                    for queue in queues { total += Int(try await monitor!.queueState(queue).messageCount) }
                    // Messages waiting for a failing provider (circuit breaker) are not delivered
                    // yet either; a wait queue exists only once something was deferred.
                    for queue in queues.map(DeferredCopy.waitQueue) {
                        do {
                            total += Int(try await monitor!.queueState(queue).messageCount)
                        } catch let error as AMQPError where error.code == .notFound {
                            continue
                        }
                    }
                    depth = total
                } catch {
                    logger.debug("Queue depth unknown", metadata: [LogKey.error: "\(error)"])
                }
                // A count of the backlog reads the whole table: asked only once the queues are
                // empty, when it decides whether the drain is done.
                let queued = depth == 0 ? try? await worker.store.backlog.count() : last.queuedInBacklog
                let broadcasts = depth == 0 ? try? await worker.store.broadcasts.unfinishedCount() : last.broadcastsUnderWay
                let statistics = worker.statistics
                let idle =
                    worker.isConsuming && depth == 0 && queued == 0 && broadcasts == 0 && statistics.messagesInFlight == 0
                    && statistics.deliveriesInFlight == 0
                quietPolls = idle ? quietPolls + 1 : 0
                last = DrainProgress(
                    queueDepth: depth, queuedInBacklog: queued, broadcastsUnderWay: broadcasts, statistics: statistics,
                    elapsed: ContinuousClock.now - started, isComplete: quietPolls >= 2)
                progress(last)
                if last.isComplete || last.elapsed >= timeout { break }
            }
            worker.stop()
            await group.waitForAll()
            await monitor?.close()
            last.statistics = worker.statistics
            last.elapsed = ContinuousClock.now - started
            return last
        }
    }
}
