import HeraldCore

/// A snapshot of a worker's counters since it started: what `herald drain` prints and tests and
/// the benchmark read. Metrics (swift-metrics) carry the same numbers for dashboards.
public struct WorkerStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Messages received from the broker (a redelivered message counts again).
    public var consumed = 0
    /// Messages acknowledged after all their deliveries were terminal (or they had none).
    public var acked = 0
    /// Messages published to the dead-letter queue (then acknowledged).
    public var deadLettered = 0
    /// Messages dropped as repeats (`AvoidDublication`), then acknowledged.
    public var duplicatesDropped = 0
    /// Messages that matched no device (acknowledged).
    public var noRecipients = 0
    /// Messages received on a connection that was lost before they were settled (the broker
    /// delivers them again).
    public var requeued = 0
    /// Deliveries the provider accepted.
    public var delivered = 0
    /// Deliveries skipped because the journal already had them (sent or ended before) or a
    /// delivery with the same key was already in flight here.
    public var skipped = 0
    /// Deliveries whose token the provider refused (device marked dead).
    public var tokenDead = 0
    /// Deliveries that failed for good (permanent failure or retries exhausted).
    public var failed = 0
    /// Attempts repeated after a transient failure.
    public var retries = 0
    /// Deliveries given up at shutdown before they were terminal (their messages are requeued).
    public var abandoned = 0
    /// Connections (re)established.
    public var connections = 0
    /// With partitions: main-queue messages the ingest copied to the partition queues (then
    /// acknowledged). Their copies count in ``consumed`` where they are delivered.
    public var ingested = 0
    /// With partitions: partition copies the ingest published (confirmed).
    public var partitionCopies = 0
    /// Deliveries deferred because their provider's circuit breaker was open: queued in the
    /// backlog, or (without it) republished to the wait queue.
    public var deferred = 0
    /// Messages republished to the wait queue.
    public var republished = 0
    /// Deliveries queued in their user's backlog (they waited behind the user's earlier ones).
    public var queued = 0
    /// Messages received and not yet settled (the ingest's included) (acknowledged, dead-lettered or requeued).
    public var messagesInFlight = 0
    /// Deliveries started and not yet recorded.
    public var deliveriesInFlight = 0
    /// Publish→sent latency of the deliveries whose message carried a publish time.
    public var latencySamples = 0
    public var latencyP50: Duration?
    public var latencyP99: Duration?
    /// How long each provider took to answer, as the worker saw it (from sending a delivery to
    /// taking the answer: the HTTP client's queue and the round trip), by platform.
    public var providerAnswers: [Platform: AnswerTimes] = [:]

    public struct AnswerTimes: Sendable, Hashable {
        public var count: Int
        public var p50: Duration?
        public var p99: Duration?
    }

    public init() {}

    public var description: String {
        var text =
            "consumed \(consumed), acked \(acked), dead-lettered \(deadLettered), duplicates \(duplicatesDropped), "
            + "no recipients \(noRecipients), delivered \(delivered), skipped \(skipped), token dead \(tokenDead), "
            + "failed \(failed), retries \(retries), in flight \(messagesInFlight) messages / \(deliveriesInFlight) deliveries"
        if ingested > 0 || partitionCopies > 0 { text += ", ingested \(ingested) (\(partitionCopies) partition copies)" }
        if deferred > 0 { text += ", deferred \(deferred)" + (republished > 0 ? " (\(republished) messages to the wait queue)" : "") }
        if queued > 0 { text += ", queued in the backlog \(queued)" }
        return text
    }
}
