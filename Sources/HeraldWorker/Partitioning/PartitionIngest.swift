import Foundation
import HeraldAMQP
import HeraldCore
import HeraldStore
import Logging
import Synchronization

/// The ingest stage of a partitioned installation (`worker.partitions` > 0): consumes the main
/// queue with an *exclusive* consumer, so that one worker process at a time ingests, and copies
/// each event, in arrival order, to the partition queues of its users (see ``PartitionLayout``).
///
/// Every worker process runs one. The one whose `basic.consume(exclusive)` succeeds holds the
/// ingest; the others are refused (`ACCESS_REFUSED`/`RESOURCE_LOCKED`) and try again every
/// ``WorkerConfiguration/ingestRetryInterval``, so another takes over within about that long
/// when the holder dies. Standing by is logged once at info level, not as an error.
///
/// For each chunk of messages:
/// 1. decode; an undecodable message, an unknown event id, a non-News event without `UserId`
///    and an event that does not render in the default culture go to the dead-letter queue
///    exactly as without partitions (once, here, rather than once per partition);
/// 2. publish the original body and properties, plus `x-herald-partition` and
///    `x-herald-partitions` headers (and the body's hash as `message-id` when the producer set
///    none, so that every copy has the message key of the original), to each partition queue of
///    the event, in order, on one channel, with publisher confirms;
/// 3. acknowledge an original only once every copy of it is confirmed.
///
/// Nothing is acknowledged before it is confirmed or dead-lettered. When the connection is lost,
/// or the worker stops, the unsettled originals go back to the main queue, at their places, and
/// are copied again by whoever ingests next: a copy may then exist twice; its deliveries are
/// skipped by the journal (and `AvoidDublication` drops the repeat). A stop does not cancel the
/// consumer first (another process could then take the ingest and receive later messages
/// before ours are requeued): it finishes the chunk in hand and closes the connection, which
/// requeues and releases the queue at once.
///
/// Thread rules: `Sendable`; ``run()`` is called once, by the worker. ``isHolding`` and
/// ``heldMessages`` may be read from any task.
final class PartitionIngest: Sendable {
    private let configuration: WorkerConfiguration
    private let layout: PartitionLayout
    private let store: Store
    private let deadLetters: DeadLetterPublisher
    private let acknowledger: Acknowledger
    private let metrics: WorkerMetrics
    private let retry: StoreRetry
    private let stop: StopSignal
    private let logger: Logger
    private let holding = Atomic<Bool>(false)
    private let held = Atomic<Int>(0)

    init(
        configuration: WorkerConfiguration, layout: PartitionLayout, store: Store, deadLetters: DeadLetterPublisher, acknowledger: Acknowledger,
        metrics: WorkerMetrics, retry: StoreRetry, stop: StopSignal, logger: Logger
    ) {
        self.acknowledger = acknowledger
        self.configuration = configuration
        self.layout = layout
        self.store = store
        self.deadLetters = deadLetters
        self.metrics = metrics
        self.retry = retry
        self.stop = stop
        self.logger = logger
    }

    /// Whether this process holds the ingest right now.
    var isHolding: Bool { holding.load(ordering: .relaxed) }
    /// Main-queue messages received and not yet settled.
    var heldMessages: Int { held.load(ordering: .relaxed) }

    /// Connects, takes the ingest when it is free, ingests, reconnects; until stopping.
    func run() async {
        var standingBy = false
        var sessions: UInt64 = 0
        let broker = BrokerSessions(
            amqp: configuration.amqp, initialDelay: configuration.reconnectInitialDelay, maxDelay: configuration.reconnectMaxDelay, stop: stop,
            logger: logger
        )
        await broker.run(role: "Ingest") { connection in
            if configuration.declareTopology { try await PartitionTopology.declare(layout, on: connection, logger: logger) }
        } session: { connection, _ in
            defer { held.store(0, ordering: .relaxed) }
            return await takeAndIngest(on: connection, standingBy: &standingBy, sessions: &sessions)
        }
    }

    /// Sleeps one jittered ``WorkerConfiguration/ingestRetryInterval`` (less if stopping) before
    /// the ingest is looked at again.
    private func waitForNextLook() async {
        _ = await stop.sleep(for: configuration.ingestRetryInterval.jittered)
    }

    /// Waits until the ingest is free (no process holds the main queue's exclusive consumer, no
    /// partition queue beyond ours exists), then ingests. Returns the error when the connection
    /// was lost, nil when stopping.
    private func takeAndIngest(on connection: AMQPConnection, standingBy: inout Bool, sessions: inout UInt64) async -> (any Error)? {
        var refusedForCount = false
        while !stop.isStopping {
            // A partition queue beyond ours means a process with a larger K copied (or
            // copies) there: ingesting with our K would split users between two layouts.
            let beyond = layout.queueName(layout.count)
            do {
                _ = try await connection.queueState(beyond)
                if !refusedForCount {
                    refusedForCount = true
                    logger.error(
                        "Not ingesting: a partition queue beyond this worker's worker.partitions exists; every worker must use the same (delete the extra partition queues once empty)",
                        metadata: [
                            LogKey.queue: "\(beyond)", LogKey.partitions: "\(layout.count)",
                        ])
                }
                await waitForNextLook()
                continue
            } catch  where error.code == .notFound {
                refusedForCount = false
            } catch {
                return error
            }
            let consumer: AMQPConsumer
            do {
                // The lock first: RabbitMQ accepts several "exclusive" consumers on a quorum
                // queue (amqp.queue_type quorum), so the exclusive consumer alone let every
                // process ingest at once there. An exclusive queue belongs to one connection
                // (another's declare is refused with RESOURCE_LOCKED) and goes with it.
                try await connection.declareQueue(layout.ingestLock)
                consumer = try await connection.consume(queue: layout.topology.queue, prefetch: configuration.prefetch, exclusive: true)
            } catch  where error.code == .accessRefused || error.code == .resourceLocked {
                if !standingBy {
                    standingBy = true
                    logger.info(
                        "Another worker holds the ingest; standing by",
                        metadata: [
                            LogKey.queue: "\(layout.topology.queue)", LogKey.retryEvery: "\(configuration.ingestRetryInterval)",
                        ])
                }
                await waitForNextLook()
                continue
            } catch {
                return error
            }
            standingBy = false
            logger.info("Holding the ingest", metadata: [LogKey.queue: "\(layout.topology.queue)", LogKey.partitions: "\(layout.count)"])
            holding.store(true, ordering: .relaxed)
            sessions += 1
            let lost = await ingest(consumer, connection: connection, session: sessions)
            holding.store(false, ordering: .relaxed)
            return lost
        }
        return nil
    }

    /// Ingests from `consumer` until the connection is lost (returns the error) or the worker
    /// stops (returns nil; the caller closes the connection, which requeues what was not
    /// settled).
    private func ingest(_ consumer: AMQPConsumer, connection: AMQPConnection, session: UInt64) async -> (any Error)? {
        let inbox = MessageInbox()
        let token = stop.onStop { inbox.close() }
        defer { stop.remove(token) }
        return await withDiscardingTaskGroup { group in
            group.addTask { [self] in
                do {
                    try await inbox.fill(from: consumer) { batch in
                        self.held.add(batch.count, ordering: .relaxed)
                        return batch.map { TrackedMessage(delivery: $0, queue: configuration.topology.queue, connection: connection, session: session) }
                    }
                    inbox.end(error: nil)
                } catch {
                    inbox.end(error: error)
                }
            }
            while let chunk = await inbox.take(max: configuration.maxChunk) {
                if let error = await process(chunk, connection: connection) {
                    group.cancelAll()
                    return error
                }
            }
            if let error = inbox.endError { return error }
            // Stopping: close (not cancel) so that what we hold is requeued before another
            // process can take the ingest; the consumer sequence then ends.
            await connection.close()
            return nil
        }
    }

    /// Copies one chunk to the partition queues and acknowledges its originals. Returns an error
    /// when the connection is lost.
    private func process(_ chunk: [TrackedMessage], connection: AMQPConnection) async -> AMQPError? {
        guard let catalog = await retry.run("TemplateCache.catalog", { () async throws(StoreError) in try await store.templateCache.catalog() }) else {
            return nil
        }
        let selector = RecipientSelector(policy: configuration.selectionPolicy)
        var originals: [TrackedMessage] = []
        var copies: [AMQPOutgoingMessage] = []
        var owners: [Int] = []
        for item in chunk {
            let delivery = item.delivery
            let messageKey = IncomingMessage.messageKey(delivery)
            let event: Event, metadata: EventMetadata
            switch EventAdmission.admit(delivery, decoder: configuration.decoder, catalog: catalog) {
            case .admitted(let admitted, let found):
                (event, metadata) = (admitted, found)
            case .refused(let code, let reason, let eventId):
                await deadLetter(item, code, reason, eventId: eventId, messageKey: messageKey)
                continue
            }
            do {
                // No subscription: only the event's own checks (a non-News event without UserId).
                _ = try selector.select(event, tag: metadata.tag, from: [Subscription]())
            } catch {
                await deadLetter(item, .noAddressee, error.description, eventId: event.id, messageKey: messageKey)
                continue
            }
            do {
                try catalog.validateInDefaultCulture(event)
            } catch {
                await deadLetter(item, DeadLetterCode.forTemplateError(error), error.description, eventId: event.id, messageKey: messageKey)
                continue
            }
            for partition in layout.partitions(for: event) {
                copies.append(copy(of: delivery, messageKey: messageKey, partition: partition))
                owners.append(originals.count)
            }
            originals.append(item)
        }
        guard !originals.isEmpty else { return nil }

        var pending = Array(copies.indices)
        var backoff = Backoff(initial: configuration.reconnectInitialDelay, maximum: configuration.reconnectMaxDelay)
        while !pending.isEmpty {
            do {
                try await connection.publishBatch(pending.map { copies[$0] })
                pending = []
            } catch {
                if error.endsConnection { return error }
                let failed = Set(error.failedMessageIndices)
                pending = pending.enumerated().filter { failed.contains($0.offset) }.map(\.element)
                if stop.isStopping { break }
                // A nack (broker trouble) or an unroutable copy (a partition queue deleted):
                // never acknowledge the original without its copy. A retried copy may land
                // behind a later message's copy; the broker does not nack in normal operation.
                let delay = backoff.next()
                logger.error(
                    "Partition copies refused by the broker; retrying",
                    metadata: [
                        LogKey.error: "\(error)", LogKey.count: "\(pending.count)", LogKey.retryIn: "\(delay)",
                    ])
                if error.code == .unroutable, configuration.declareTopology {
                    try? await PartitionTopology.declare(layout, on: connection, logger: logger)
                }
                guard await stop.sleep(for: delay) else { break }
            }
        }
        // Acknowledge every original whose copies are all confirmed (all of them, unless stopping).
        let unconfirmed = Set(pending.map { owners[$0] })
        var copiesOf = [Int](repeating: 0, count: originals.count)
        for owner in owners { copiesOf[owner] += 1 }
        for (index, original) in originals.enumerated() where !unconfirmed.contains(index) && acknowledger.ack(original, counted: false) {
            metrics.ingested(copies: copiesOf[index])
            held.subtract(1, ordering: .relaxed)
        }
        return nil
    }

    /// The copy of `delivery` for `partition`: same body and properties, plus the partition
    /// headers and a message id.
    private func copy(of delivery: AMQPDelivery, messageKey: String, partition: Int) -> AMQPOutgoingMessage {
        var properties = DeadLetterHeaders.republishable(delivery.properties)
        if properties.messageID?.isEmpty ?? true { properties.messageID = messageKey }
        if properties.deliveryMode == nil { properties.deliveryMode = .persistent }
        properties.headers[PartitionLayout.partitionHeader] = .int(Int64(partition))
        properties.headers[PartitionLayout.countHeader] = .int(Int64(layout.count))
        return AMQPOutgoingMessage(exchange: "", routingKey: layout.queueName(partition), body: delivery.body, properties: properties, mandatory: true)
    }

    private func deadLetter(_ message: TrackedMessage, _ code: DeadLetterCode, _ reason: String, eventId: String?, messageKey: String) async {
        guard await deadLetters.deadLetter(message, code: code, reason: reason, eventId: eventId, messageKey: messageKey) else { return }
        if acknowledger.ack(message) { held.subtract(1, ordering: .relaxed) }
    }
}
