import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldStore
import Logging
import ServiceLifecycle
import Synchronization

/// Herald's worker: consumes the event queue and delivers every event to its recipients'
/// devices through a ``HeraldDelivery/PushSender``, with nothing lost.
///
/// Guarantees (see `docs/architecture.md`):
/// - a message is acknowledged only when every delivery it produced is terminal and recorded
///   (at-least-once from the broker); a delivery recorded as sent is skipped when the message
///   comes again (effectively-once to the device);
/// - a user's deliveries go out one at a time, in the order their messages arrived, retries
///   included; up to ``WorkerConfiguration/lanes`` users at once;
/// - a message that cannot be decoded or rendered goes to the dead-letter queue with its reason
///   before it is acknowledged.
///
/// Lifecycle: ``run()`` connects (retrying with backoff), declares the topology, consumes, and
/// reconnects when the broker goes away (in-flight deliveries finish first, bounded by
/// ``WorkerConfiguration/shutdownTimeout``; their acknowledgements are forgotten and the broker
/// delivers the messages again). A graceful shutdown (swift-service-lifecycle, or ``stop()``)
/// cancels the consumer, lets in-flight deliveries finish and acknowledges them within the
/// shutdown timeout, gives up on the rest (the broker requeues them), closes the connection and
/// shuts the sender down. Cancelling the task that runs ``run()`` does the same without waiting.
///
/// With ``WorkerConfiguration/partitions`` > 0 the worker also runs the ingest stage
/// (``isIngesting`` while it holds it) and consumes the partition queues instead of the main
/// queue, so that many processes keep each user's order (see ``PartitionLayout``): its fair share
/// of them, owned through advisory locks in PostgreSQL and handed over live as processes join
/// and leave (``PartitionOwnership``); a graceful stop then finishes and acknowledges in-flight
/// deliveries before closing, without cancelling its consumers first, so that the next owner
/// starts after them.
///
/// The store must be migrated; ``run()`` starts its change listener (caches). The caller owns
/// the store (closes it after ``run()`` returns); the worker owns the sender from ``run()`` on.
///
/// Thread rules: `Sendable`; ``stop()`` and ``statistics`` may be called from any task. All
/// blocking C work happens on the AMQP and PostgreSQL wrappers' own threads.
public final class WorkerService: Service, Sendable {
    public let configuration: WorkerConfiguration
    let store: Store
    private let sender: any PushSender
    private let logger: Logger
    private let stopSignal = StopSignal()
    private let metrics = WorkerMetrics()
    private let tracker = MessageTracker()
    private let consuming = Atomic<Bool>(false)
    private let owned = OwnedPartitions()
    private let session = Atomic<UInt64>(0)
    private let mismatchedCounts = Mutex<Set<Int>>([])
    private let retry: StoreRetry
    private let deadLetters: DeadLetterPublisher
    private let acknowledger: Acknowledger
    /// With partitions: the ingest stage this process runs beside its partition consumers.
    private let ingest: PartitionIngest?

    /// - Throws: ``WorkerError/Code/invalidConfiguration``.
    public init(configuration: WorkerConfiguration, store: Store, sender: any PushSender, logger: Logger = Logger(label: "herald.worker")) throws(WorkerError) {
        try configuration.validate()
        self.configuration = configuration
        self.store = store
        self.sender = sender
        self.logger = logger
        self.retry = StoreRetry(
            stop: stopSignal, initialDelay: configuration.storeRetryInitialDelay, maxDelay: configuration.storeRetryMaxDelay, logger: logger
        )
        let deadLetters = DeadLetterPublisher(
            topology: configuration.topology, store: store, retry: retry, metrics: metrics, stop: stopSignal, logger: logger,
            backoffInitial: configuration.reconnectInitialDelay, backoffMax: configuration.reconnectMaxDelay
        )
        self.deadLetters = deadLetters
        let acknowledger = Acknowledger(metrics: metrics, logger: logger)
        self.acknowledger = acknowledger
        self.ingest = configuration.partitionLayout.map { [stopSignal, metrics, retry] layout in
            PartitionIngest(
                configuration: configuration, layout: layout, store: store, deadLetters: deadLetters, acknowledger: acknowledger,
                metrics: metrics, retry: retry, stop: stopSignal, logger: logger
            )
        }
    }

    /// Counters since the worker was created.
    public var statistics: WorkerStatistics {
        metrics.snapshot(messagesInFlight: tracker.messageCount + (ingest?.heldMessages ?? 0), deliveriesInFlight: tracker.deliveryCount)
    }

    /// Publish→sent latencies of the deliveries sent so far: each non-empty histogram bucket
    /// (2 % wide) by its upper edge, in order.
    public var latencyDistribution: [(upTo: Duration, count: Int)] { metrics.latency.distribution }

    /// The providers' answer times so far (from sending a delivery to taking its answer), both
    /// providers together, as ``latencyDistribution``.
    public var providerAnswerDistribution: [(upTo: Duration, count: Int)] { metrics.answerDistribution }

    /// Whether a consumer is running right now (false while connecting or reconnecting). With
    /// partitions: whether this process's broker session runs (it then consumes its share of the
    /// partitions, ``ownedPartitions``).
    public var isConsuming: Bool { consuming.load(ordering: .relaxed) }

    /// With partitions: the partitions this process owns (holds the lock of, and consumes) right
    /// now; every change is logged ("Consuming partitions", `herald.partitions_owned`).
    public var ownedPartitions: Set<Int> { owned.current }

    /// With partitions: whether this process holds the ingest (the exclusive consumer of the
    /// main queue) right now. Always false without partitions.
    public var isIngesting: Bool { ingest?.isHolding ?? false }

    /// Begins a graceful stop; ``run()`` returns once it is done. Idempotent.
    public func stop() {
        stopSignal.stop()
    }

    /// Runs until stopped (``stop()``, a graceful shutdown of the service group, or task
    /// cancellation). Does not throw: broker and store failures are retried with backoff and
    /// logged.
    public func run() async throws {
        store.start()
        let engine = DeliveryEngine(
            settings: EngineCore.Settings(
                lanes: configuration.lanes, policy: configuration.retryPolicy, builder: configuration.payloadBuilder,
                recordBatchSize: configuration.recordBatchSize, recordConcurrency: configuration.recordConcurrency,
                recordLinger: configuration.recordLinger, recordLingerBelow: configuration.recordLingerBelow,
                circuitBreaker: configuration.circuitBreaker, backlogAfter: configuration.backlogAfter,
                backlogWindow: configuration.backlogWindow, backlogMemory: configuration.backlogMemory,
                partitions: configuration.partitions
            ),
            sender: sender, journal: store.journal, backlog: configuration.backlog ? store.backlog : nil, tracker: tracker,
            deadTokens: DeadTokenRegistry(capacity: configuration.deadTokenMemory),
            acknowledger: acknowledger, deferredCopy: DeferredCopy(queueType: configuration.topology.queueType, metrics: metrics, logger: logger),
            metrics: metrics, retry: retry, stop: stopSignal, logger: logger
        )
        let claimQueue = store.journal.makeClaimQueue()
        let claims = ClaimStage(
            journal: store.journal, queue: claimQueue, tracker: tracker, engine: engine, acknowledger: acknowledger, metrics: metrics, retry: retry,
            logger: logger,
            countsUnread: configuration.payloadBuilder.carriesBadge
        )
        let broadcasts = BroadcastRunner(
            configuration: configuration, store: store, claims: claims, tracker: tracker, acknowledger: acknowledger, retry: retry,
            stop: stopSignal, logger: logger)
        let pipeline = Pipeline(
            planner: MessagePlanner(
                configuration: configuration, store: store, tracker: tracker, deadLetters: deadLetters, acknowledger: acknowledger,
                audience: BroadcastAudience(
                    devices: store.devices, changes: store.subscriptionCache, ttl: configuration.broadcastAudienceTTL,
                    limit: configuration.broadcastMemoryLimit),
                broadcasts: broadcasts, metrics: metrics, retry: retry
            ),
            claims: claims, engine: engine, broadcasts: broadcasts
        )
        let wakeOnStop = stopSignal.onStop { engine.wake() }
        defer { stopSignal.remove(wakeOnStop) }
        let keeper =
            configuration.backlog && configuration.partitions == 0
            ? BacklogKeeper(
                lock: store.makeBacklogLock(), backlog: store.backlog, engine: engine, interval: configuration.backlogCheckInterval, logger: logger)
            : nil
        // Before the first message: a busy user's queued deliveries go before its new ones.
        let firstTake = await keeper?.acquire()
        let locks = configuration.partitionLayout.map { store.makePartitionLocks(keys: $0.lockKeys) }

        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withDiscardingTaskGroup { group in
                    if let ingest {
                        group.addTask { await ingest.run() }
                    }
                    group.addTask { await engine.run() }
                    group.addTask { await broadcasts.run() }
                    if let keeper, let firstTake {
                        group.addTask { await keeper.run(from: firstTake) }
                    }
                    await connectionLoop(pipeline, locks: locks)
                    // The deliveries in flight are done (or the shutdown timeout passed).
                    await broadcasts.releaseHeld()
                    if tracker.deliveryCount > 0 {
                        logger.notice(
                            "Stopping with deliveries not done; their messages will be delivered again",
                            metadata: [
                                LogKey.count: "\(tracker.deliveryCount)", LogKey.running: "\(engine.running)",
                            ])
                    }
                    stopSignal.abort()
                    engine.finish()
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                self.stop()
            }
        } onCancel: {
            stopSignal.abort()
        }
        await locks?.close()
        await sender.shutdown()
        await claimQueue.close()
        let final = statistics
        logger.info("Worker stopped", metadata: [LogKey.statistics: "\(final)"])
    }

    /// The stages a consumed chunk goes through.
    private struct Pipeline: Sendable {
        let planner: MessagePlanner
        let claims: ClaimStage
        let engine: DeliveryEngine
        let broadcasts: BroadcastRunner
    }

    // MARK: Connections

    /// Connects, consumes and reconnects until stopping; returns after the last connection closed.
    private func connectionLoop(_ pipeline: Pipeline, locks: PartitionLocks?) async {
        let broker = BrokerSessions(
            amqp: configuration.amqp, initialDelay: configuration.reconnectInitialDelay, maxDelay: configuration.reconnectMaxDelay,
            stop: stopSignal, logger: logger
        )
        await broker.run(role: "Worker") { connection in
            try await consumers(on: connection)
        } session: { connection, consumers in
            metrics.connected()
            logger.info(
                "Consuming",
                metadata: [
                    LogKey.queue: "\(configuration.topology.queue)", LogKey.prefetch: "\(configuration.prefetch)", LogKey.lanes: "\(configuration.lanes)",
                    LogKey.partitions: "\(configuration.partitions)",
                ])
            let id = session.add(1, ordering: .relaxed).newValue
            consuming.store(true, ordering: .relaxed)
            pipeline.broadcasts.use(connection)
            // One bound for every wait of this session (a stop with partitions waits in consume).
            let deadline = ShutdownDeadline(timeout: configuration.shutdownTimeout)
            let lost = await consume(consumers, connection: connection, session: id, pipeline: pipeline, locks: locks, deadline: deadline)
            consuming.store(false, ordering: .relaxed)
            pipeline.broadcasts.use(nil)

            // Deliveries running finish (their records are written) before the connection is
            // closed or replaced; bounded by the shutdown timeout. Deliveries still waiting in a
            // lane stay tracked: after a reconnect, the redelivered message joins them; when
            // stopping, they are given up.
            await waitForRunningDeliveries(pipeline.engine, until: deadline)
            if lost != nil {
                let requeued = tracker.forgetSession(id)
                metrics.requeued(requeued)
                if requeued > 0 { logger.info("Messages of the lost connection go back to their queue", metadata: [LogKey.count: "\(requeued)"]) }
            }
            // Without a broker connection this process cannot consume its partitions: others
            // take them (after its in-flight deliveries above, unless the bound passed).
            await locks?.releaseAll()
            return lost
        }
    }

    /// Declares (when declaring) and consumes the work queue; with partitions only declares (the
    /// partition consumers start as this process's share says: ``PartitionOwnership``).
    private func consumers(on connection: AMQPConnection) async throws(AMQPError) -> [Source] {
        if let layout = configuration.partitionLayout {
            if configuration.declareTopology { try await PartitionTopology.declare(layout, on: connection, logger: logger) }
            return []
        }
        if configuration.declareTopology {
            for warning in try await connection.declare(configuration.topology) {
                logger.warning("Broker object exists with other settings; using it as it is", metadata: [LogKey.error: "\(warning)"])
            }
        }
        let queue = configuration.topology.queue
        return [Source(consumer: try await connection.consume(queue: queue, prefetch: configuration.prefetch), queue: queue)]
    }

    /// A consumer of the work queue.
    private struct Source: Sendable {
        let consumer: AMQPConsumer
        let queue: String
    }

    /// Runs the consumers of one connection until they end; returns the error when the
    /// connection was lost, nil when the worker is stopping.
    private func consume(
        _ sources: [Source], connection: AMQPConnection, session: UInt64, pipeline: Pipeline, locks: PartitionLocks?, deadline: ShutdownDeadline
    ) async -> (any Error)? {
        let inbox = MessageInbox()
        let token = stopSignal.onStop { inbox.close() }
        defer { stopSignal.remove(token) }
        let layout = configuration.partitionLayout
        return await withDiscardingTaskGroup { group in
            for source in sources {
                group.addTask {
                    await self.pump(source.consumer, queue: source.queue, partition: nil, gate: nil, connection: connection, session: session, inbox: inbox)
                }
            }
            if let layout, let locks {
                let ownership = PartitionOwnership(
                    layout: layout, locks: locks, configuration: configuration, tracker: tracker, metrics: metrics, owned: owned,
                    backlogs: configuration.backlog ? PartitionBacklogs(backlog: store.backlog, engine: pipeline.engine, layout: layout) : nil,
                    stop: stopSignal, logger: logger
                ) { consumer, partition, gate in
                    await self.pump(consumer, queue: consumer.queue, partition: partition, gate: gate, connection: connection, session: session, inbox: inbox)
                }
                group.addTask { await ownership.run(connection: connection, session: session, inbox: inbox) }
            }
            // Planning chunk n + 1 overlaps the claim of chunk n in the database; claims run one
            // after the other, in arrival order (one ClaimQueue), and are fanned out in order:
            // chunk n's answer is processed by a child task while chunk n + 1 is taken and planned.
            var pending: (planned: [PlannedMessage], claim: PendingClaim?)?
            while true {
                let previous = pending
                async let processed: Void = {
                    if let previous { await pipeline.claims.process(previous.planned, claim: previous.claim) }
                }()
                guard let chunk = await inbox.take(max: configuration.maxChunk) else {
                    await processed
                    break
                }
                let planned = await pipeline.planner.plan(chunk)
                // Sent now: it runs in the database right after the previous chunk's claim,
                // while that one's answer is still on its way here.
                let claim = planned.flatMap { pipeline.claims.submit($0) }
                await processed
                pending = planned.map { ($0, claim) }
            }
            if let error = inbox.endError {
                // One consumer ended abnormally: end the others too (their channels close and
                // the broker requeues what they held); the caller reconnects.
                group.cancelAll()
                return error
            }
            if layout != nil {
                // Stopping, partitions: cancelling would let a standby consumer become active
                // at once and deliver a user's next message while this one's is still in
                // flight. Instead finish (and acknowledge) what runs while our channels are
                // open, then close: the rest is requeued at its place, and our locks are
                // released after that (connectionLoop), so the next owner starts after us.
                await waitForRunningDeliveries(pipeline.engine, until: deadline)
                await connection.close()
                return nil
            }
            // Stopping: no more deliveries (those already sent to us stay unsettled and return
            // to the queue when the connection closes); the consumer sequence then ends.
            do {
                try await sources[0].consumer.cancel()
            } catch {
                return error
            }
            return nil
        }
    }

    /// Feeds one consumer's deliveries into the pipeline until its stream ends. A partition
    /// consumer's batches pass its `gate` (closed: dropped, and requeued when its channel
    /// closes); its normal end (its partition handed over, or the connection closed) ends
    /// nothing else, nor does an error after its gate closed.
    private func pump(
        _ consumer: AMQPConsumer, queue: String, partition: Int?, gate: PartitionGate?, connection: AMQPConnection, session: UInt64, inbox: MessageInbox
    ) async {
        let layout = configuration.partitionLayout
        do {
            // Each message is decoded here, as it arrives, in parallel with the intake's planning
            // of the chunk before; one lock for the tracker per batch.
            try await inbox.fill(from: consumer) { batch in
                let messages = batch.map { delivery in
                    var slice: PartitionSlice?
                    if let partition, let layout {
                        slice = PartitionSlice.of(delivery, queuePartition: partition, layout: layout)
                        if let slice, slice.count != layout.count { reportCountMismatch(slice, layout: layout) }
                    }
                    return TrackedMessage(
                        delivery: delivery, queue: queue, connection: connection, session: session, slice: slice, decoder: configuration.decoder)
                }
                if let gate {
                    guard gate.admit({ tracker.register(messages) }) else { return nil }
                } else {
                    tracker.register(messages)
                }
                metrics.consumed(batch.count)
                return messages
            }
            if gate == nil { inbox.end(error: nil) }
        } catch {
            if gate?.isClosed != true { inbox.end(error: error) }
        }
    }

    /// Another process copies with another K: its copies to partitions beyond ours are read by
    /// nobody here. Delivered anyway (by the copy's own headers); counted, and logged once per K.
    private func reportCountMismatch(_ slice: PartitionSlice, layout: PartitionLayout) {
        metrics.partitionCountMismatch()
        guard mismatchedCounts.withLock({ $0.insert(slice.count).inserted }) else { return }
        logger.error(
            "A partition copy was made with another worker.partitions than this worker's; every worker must use the same",
            metadata: [
                LogKey.partitions: "\(layout.count)", LogKey.copyPartitions: "\(slice.count)", LogKey.queue: "\(layout.topology.queue)",
            ])
    }

    /// Waits until no delivery is being sent or recorded, at most until `bound` (less if aborted).
    private func waitForRunningDeliveries(_ engine: DeliveryEngine, until bound: ShutdownDeadline) async {
        _ = await tracker.changes.wait(for: { engine.running == 0 }, until: bound.instant, stop: stopSignal, phase: .aborted)
    }
}
