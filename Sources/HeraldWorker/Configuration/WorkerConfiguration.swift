import HeraldAMQP
import HeraldCore

/// How a worker consumes, orders, sends and retries. The `herald` executable fills it from its
/// configuration (`worker.*`, `amqp.*` keys); libraries never read the environment.
public struct WorkerConfiguration: Sendable {
    /// The broker.
    public var amqp: AMQPConfiguration
    /// The exchange, queue and dead-letter layout (declared at every (re)connect).
    public var topology: HeraldTopology
    /// Whether to declare ``topology`` on connect (off when an operator manages the broker).
    public var declareTopology: Bool
    /// Unacknowledged messages held at once (`basic.qos`). A message is held until every one
    /// of its deliveries is terminal, retries included.
    public var prefetch: UInt16
    /// The seed's "number of threads": how many users may have a delivery in flight at once.
    /// Lanes are logical (a lane is a waiting slot, not an OS thread); a user's deliveries
    /// always go one at a time, in order.
    public var lanes: Int
    /// How long a graceful stop waits for in-flight deliveries before it gives up on them
    /// (their messages are then requeued by the broker), and how long a lost connection waits
    /// for them before reconnecting.
    public var shutdownTimeout: Duration
    /// Retries of a delivery the provider answered with `retryAfter`.
    public var retryPolicy: RetryPolicy
    /// Payload shapes (legacy seed 000 or modern) and limits.
    public var payloadBuilder: PayloadBuilder
    public var selectionPolicy: SelectionPolicy
    public var decoder: EventDecoder
    /// Most messages the intake takes from the consumer's buffer in one chunk (one subscription
    /// lookup, one dedupe call and one claim call per chunk). Small against the prefetch window:
    /// every message of a chunk waits for the whole chunk's planning and claim, and the messages
    /// in the worker are part of the window (a chunk well below the window made the pipeline
    /// faster and cheaper in all three processes; a much smaller one no better:
    /// docs/performance.md, "Chunks smaller than the window").
    public var maxChunk: Int
    /// Most delivery outcomes recorded in one store call.
    public var recordBatchSize: Int
    /// Store calls in flight at once for outcome records. One by default: writes then end in the
    /// order they began, so a message's acknowledgement never waits behind an older message whose
    /// rows are in a slower write running beside it. With two, a newer batch often finished first
    /// and its messages' acks were held or went one by one (one write at a time is cheaper for
    /// RabbitMQ and PostgreSQL alike: docs/performance.md, "One record write at a time").
    public var recordConcurrency: Int
    /// How long outcomes wait for more before they are written, when no write is in flight and
    /// fewer than ``recordLingerBelow`` are queued. With real providers answers trickle in, and
    /// each write of a few cost PostgreSQL a statement and a commit; a short wait for company
    /// makes fuller writes, cheaper for PostgreSQL and faster in all (docs/performance.md,
    /// "Outcomes wait up to 5 ms for company"). It moves no delivery's sending, only its record
    /// and its message's acknowledgement: the window for a resend after a crash grows by at most
    /// this (docs/architecture.md, "Guarantees"). `.zero` writes at once.
    public var recordLinger: Duration
    /// A queue of outcomes this long is written at once, without ``recordLinger``'s wait.
    public var recordLingerBelow: Int
    /// Reconnect backoff after the broker went away: doubles from the first to the last.
    public var reconnectInitialDelay: Duration
    public var reconnectMaxDelay: Duration
    /// Backoff of a store call that failed (the database restarting).
    public var storeRetryInitialDelay: Duration
    public var storeRetryMaxDelay: Duration
    /// The subscriptions of a broadcast (every deliverable device) are read once and reused
    /// until a subscription changes; this is how long after a change (or, while the store's
    /// change notifications are not flowing, after the read) they may still be the old ones.
    /// `.zero` reads them for every chunk with a broadcast.
    public var broadcastAudienceTTL: Duration
    /// A broadcast is selected in memory while every deliverable subscription, this many at
    /// most, fits there (read once, reused for ``broadcastAudienceTTL``); past it, broadcasts
    /// are written down and sent in windows (``BroadcastRunner``), and memory stays flat
    /// whatever the audience. 0: always in windows.
    public var broadcastMemoryLimit: Int
    /// Devices per window of a broadcast sent in windows, and windows in flight at once.
    public var broadcastWindow: Int
    public var broadcastWindows: Int
    /// How long a worker holds a broadcast without renewing it: after a kill -9 (or a lost
    /// database) another worker resumes it this long after the last renewal, at most.
    public var broadcastLease: Duration
    /// Devices whose token the provider refused are remembered in memory (besides the store)
    /// up to this many, so that deliveries already selected for them are not sent.
    public var deadTokenMemory: Int
    /// `worker.partitions`, K: 0 (the default) consumes ``HeraldTopology/queue`` directly, as a
    /// single process always did. K > 0 keeps each user's order across many worker processes:
    /// every process runs the ingest (an exclusive consumer of the main queue, one process at a
    /// time, that copies each event to the partition queues of its users) and consumes its fair
    /// share of the K partition queues (``PartitionOwnership``). See ``PartitionLayout``. Every
    /// process of an installation must use the same K, and reach the same database.
    public var partitions: Int
    /// With partitions: how often a process that does not hold the ingest tries to take it (the
    /// holder went away), jittered ±20 %.
    public var ingestRetryInterval: Duration
    /// With partitions: how often a process compares the partitions it owns with its fair share
    /// (``PartitionShare``, from the advisory locks in PostgreSQL) and takes or hands over
    /// partitions, jittered ±20 %. A process joining or leaving is balanced within a few of these.
    public var partitionBalanceInterval: Duration
    /// With partitions: how long a handover waits for the messages of the partition already in
    /// this process's pipeline to be settled (a delivery waiting for its retry can hold one);
    /// those still unsettled then are given up here (the broker requeues them, as after a lost
    /// connection; a delivery being sent then is in doubt). Bounds how long a handover stops
    /// the partition.
    public var partitionHandoverTimeout: Duration
    /// With partitions: how long a process that cannot read the partition locks (cut from the
    /// database, alone or not) keeps consuming its partitions before it hands them all over, so
    /// that the processes that still reach the database take them (its own claims fail, so it
    /// would deliver nothing). About PostgreSQL's own time to end the cut-off lock session.
    public var partitionUnreachableLimit: Duration
    /// When a provider (APNs or FCM, per app) counts as failing and how long its deliveries then
    /// wait in the broker (``HeraldCore/CircuitBreaker``); ``HeraldCore/CircuitBreaker/Policy/disabled``
    /// keeps retrying in memory as before.
    public var circuitBreaker: CircuitBreaker.Policy
    /// `worker.backlog`: a delivery that would wait behind more than ``backlogAfter`` of its
    /// user's earlier ones (same platform) is queued in the user's backlog in PostgreSQL and its
    /// message acknowledged, so that a busy user holds back nobody else (``HeraldStore/DeliveryBacklog``).
    /// One worker process at a time holds the backlog (without partitions:
    /// ``HeraldStore/BacklogLock``; the others keep such deliveries in memory), or each
    /// partition's (its owner).
    public var backlog: Bool
    /// How many of a user's deliveries may wait in memory before later ones go to the backlog.
    public var backlogAfter: Int
    /// How many queued deliveries of one user are kept in memory, and read back at a time.
    public var backlogWindow: Int
    /// How many queued deliveries of all users together are kept in memory (beyond it they are
    /// read back when their user gets to them): the backlog's memory, whatever its length.
    public var backlogMemory: Int
    /// How often a worker checks that it still holds the backlog, or tries to take it (without
    /// partitions; with them, the partition's lock says: ``partitionBalanceInterval``).
    public var backlogCheckInterval: Duration

    public init(amqp: AMQPConfiguration, topology: HeraldTopology = HeraldTopology()) {
        self.amqp = amqp
        self.topology = topology
        self.declareTopology = true
        self.prefetch = 300
        self.lanes = 64
        self.shutdownTimeout = .seconds(30)
        self.retryPolicy = RetryPolicy(initialDelay: .seconds(1), maxDelay: .seconds(300), maxAttempts: 8, maxElapsed: .seconds(3600))
        self.payloadBuilder = PayloadBuilder(profile: .legacy)
        self.selectionPolicy = .default
        self.decoder = EventDecoder()
        self.maxChunk = 150
        self.recordBatchSize = 500
        self.recordConcurrency = 1
        self.recordLinger = .milliseconds(5)
        self.recordLingerBelow = 128
        self.reconnectInitialDelay = .milliseconds(200)
        self.reconnectMaxDelay = .seconds(10)
        self.storeRetryInitialDelay = .milliseconds(50)
        self.storeRetryMaxDelay = .seconds(5)
        self.broadcastAudienceTTL = .seconds(2)
        self.broadcastMemoryLimit = 100_000
        self.broadcastWindow = 1_000
        self.broadcastWindows = 4
        self.broadcastLease = .seconds(10)
        self.deadTokenMemory = 100_000
        self.partitions = 0
        self.ingestRetryInterval = .seconds(2)
        self.partitionBalanceInterval = .seconds(1)
        self.partitionHandoverTimeout = .seconds(5)
        self.partitionUnreachableLimit = .seconds(10)
        self.circuitBreaker = CircuitBreaker.Policy()
        self.backlog = true
        self.backlogAfter = 64
        self.backlogWindow = 32
        self.backlogMemory = 8_192
        self.backlogCheckInterval = .seconds(2)
    }

    /// The partition queues when ``partitions`` > 0.
    public var partitionLayout: PartitionLayout? {
        partitions > 0 ? PartitionLayout(topology: topology, count: partitions) : nil
    }

    /// - Throws: ``WorkerError/Code/invalidConfiguration`` naming the field.
    public func validate() throws(WorkerError) {
        func fail(_ message: String) -> WorkerError { WorkerError(code: .invalidConfiguration, message: message) }
        guard prefetch >= 1 else { throw fail("prefetch must be at least 1") }
        guard lanes >= 1 else { throw fail("lanes (worker.threads) must be at least 1") }
        guard maxChunk >= 1, recordBatchSize >= 1, recordConcurrency >= 1 else { throw fail("batch sizes and concurrency must be at least 1") }
        guard shutdownTimeout >= .zero, broadcastAudienceTTL >= .zero, recordLinger >= .zero else { throw fail("durations must not be negative") }
        guard circuitBreaker.minimumFailures >= 1, circuitBreaker.failureRatio > 0, circuitBreaker.failureRatio <= 1,
            circuitBreaker.initialOpen > .zero, circuitBreaker.maximumOpen >= circuitBreaker.initialOpen, circuitBreaker.window > .zero
        else { throw fail("circuit breaker: failures ≥ 1, ratio in (0, 1], open periods positive with the maximum ≥ the first") }
        guard reconnectInitialDelay > .zero, storeRetryInitialDelay > .zero else { throw fail("backoff delays must be positive") }
        guard !topology.queue.isEmpty else { throw fail("the queue name must not be empty") }
        guard (0...PartitionLayout.maximumCount).contains(partitions) else {
            throw fail("partitions (worker.partitions) must be 0 (off) to \(PartitionLayout.maximumCount)")
        }
        guard ingestRetryInterval > .zero else { throw fail("the ingest retry interval must be positive") }
        guard partitionBalanceInterval > .zero else { throw fail("the partition balance interval must be positive") }
        guard partitionHandoverTimeout >= .zero, partitionUnreachableLimit >= .zero else { throw fail("durations must not be negative") }
        guard broadcastMemoryLimit >= 0, broadcastWindow >= 1, broadcastWindows >= 1, broadcastLease >= .milliseconds(300) else {
            throw fail("broadcasts: a limit ≥ 0, at least 1 device per window and 1 window, a lease of at least 300 ms")
        }
        guard backlogAfter >= 1, backlogWindow >= 1, backlogMemory >= 1, backlogCheckInterval > .zero else {
            throw fail("backlog: at least 1 delivery in memory and per read, and a positive check interval")
        }
    }
}
