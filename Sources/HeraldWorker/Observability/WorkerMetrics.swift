import Foundation
import HeraldCore
import Metrics
import Synchronization

/// The worker's counters, kept twice: as atomics for ``WorkerStatistics`` (drain summaries,
/// tests, the benchmark) and as swift-metrics instruments for whatever backend the process
/// bootstraps (`/metrics` in the API). Instruments are created once; dead letters get one
/// counter per code, created on first use. Thread-safe.
///
/// Metric names: `herald_messages_consumed_total`, `herald_messages_acked_total`,
/// `herald_messages_dead_lettered_total{code}`, `herald_messages_duplicate_total`,
/// `herald_messages_no_recipients_total`, `herald_deliveries_total{outcome}` (sent, token_dead,
/// failed, skipped, abandoned), `herald_delivery_retries_total`, `herald_deliveries_in_flight`,
/// `herald_messages_in_flight`, `herald_publish_to_sent_seconds` (timer),
/// `herald_provider_answer_seconds{provider}` (timer: from the engine's sending a delivery to its
/// taking the provider's answer, so the client's queue and the provider's round trip),
/// `herald_connections_total`; for provider outages `herald_circuit_state{provider,app}` (0
/// closed, 1 open, 2 half-open), `herald_deliveries_waiting{provider}` (parked for a retry or
/// held for a probe, in this process), `herald_deliveries_deferred_total{provider}` and
/// `herald_messages_republished_total` (copies sent to the wait queue).
final class WorkerMetrics: Sendable {
    private let consumedCount = Atomic<Int>(0)
    private let ackedCount = Atomic<Int>(0)
    private let deadLetteredCount = Atomic<Int>(0)
    private let duplicateCount = Atomic<Int>(0)
    private let noRecipientsCount = Atomic<Int>(0)
    private let requeuedCount = Atomic<Int>(0)
    private let deliveredCount = Atomic<Int>(0)
    private let skippedCount = Atomic<Int>(0)
    private let tokenDeadCount = Atomic<Int>(0)
    private let failedCount = Atomic<Int>(0)
    private let retryCount = Atomic<Int>(0)
    private let abandonedCount = Atomic<Int>(0)
    private let connectionCount = Atomic<Int>(0)
    private let ingestedCount = Atomic<Int>(0)
    private let copiesCount = Atomic<Int>(0)
    private let deferredCount = Atomic<Int>(0)
    private let republishedCount = Atomic<Int>(0)
    private let queuedCount = Atomic<Int>(0)
    private let queuedMetric = Counter(label: "herald_deliveries_queued_total")
    private let republishedMetric = Counter(label: "herald_messages_republished_total")
    /// The platforms in a fixed order: the per-platform instruments are lists in this order
    /// (``slot(_:)``), looked up without hashing.
    private static let platforms = Platform.allCases
    private let deferredMetrics = WorkerMetrics.platforms.map { Counter(label: "herald_deliveries_deferred_total", dimensions: [("provider", $0.provider)]) }
    private let waitingMetrics = WorkerMetrics.platforms.map { Gauge(label: "herald_deliveries_waiting", dimensions: [("provider", $0.provider)]) }
    let latency = LatencyHistogram()
    /// The providers' answer times (``Outcomes/answered(_:after:)``), one histogram and one timer
    /// per platform.
    private let answers = WorkerMetrics.platforms.map { platform in
        (
            platform: platform, histogram: LatencyHistogram(),
            timer: Timer(label: "herald_provider_answer_seconds", dimensions: [("provider", platform.provider)], preferredDisplayUnit: .seconds)
        )
    }

    init() {
        // Exported from the start (closed, nothing waiting), so that dashboards and alerts see
        // the series before the first outage; apps other than the default one appear when
        // their breaker first changes.
        for platform in Platform.allCases {
            circuit(provider: platform, app: nil, state: .closed)
            waiting(platform, 0)
        }
    }

    private let consumedMetric = Counter(label: "herald_messages_consumed_total")
    private let ackedMetric = Counter(label: "herald_messages_acked_total")
    private let duplicateMetric = Counter(label: "herald_messages_duplicate_total")
    private let noRecipientsMetric = Counter(label: "herald_messages_no_recipients_total")
    private let requeuedMetric = Counter(label: "herald_messages_requeued_total")
    private let sentMetric = Counter(label: "herald_deliveries_total", dimensions: [("outcome", "sent")])
    private let skippedMetric = Counter(label: "herald_deliveries_total", dimensions: [("outcome", "skipped")])
    private let tokenDeadMetric = Counter(label: "herald_deliveries_total", dimensions: [("outcome", "token_dead")])
    private let failedMetric = Counter(label: "herald_deliveries_total", dimensions: [("outcome", "failed")])
    private let abandonedMetric = Counter(label: "herald_deliveries_total", dimensions: [("outcome", "abandoned")])
    private let retryMetric = Counter(label: "herald_delivery_retries_total")
    private let connectionMetric = Counter(label: "herald_connections_total")
    private let ingestedMetric = Counter(label: "herald_messages_ingested_total")
    private let copiesMetric = Counter(label: "herald_partition_copies_total")
    private let countMismatchMetric = Counter(label: "herald_partition_count_mismatch_total")
    private let deliveriesInFlightMetric = Gauge(label: "herald_deliveries_in_flight")
    private let messagesInFlightMetric = Gauge(label: "herald_messages_in_flight")
    private let latencyMetric = Timer(label: "herald_publish_to_sent_seconds", preferredDisplayUnit: .seconds)
    private let deadLetterMetrics = Mutex<[String: Counter]>([:])

    func consumed(_ n: Int = 1) { consumedCount.add(n, ordering: .relaxed); consumedMetric.increment(by: Int64(n)) }
    func acked(_ n: Int = 1) { ackedCount.add(n, ordering: .relaxed); ackedMetric.increment(by: Int64(n)) }
    func duplicate() { duplicateCount.add(1, ordering: .relaxed); duplicateMetric.increment() }
    func noRecipients() { noRecipientsCount.add(1, ordering: .relaxed); noRecipientsMetric.increment() }
    func requeued(_ n: Int) { requeuedCount.add(n, ordering: .relaxed); requeuedMetric.increment(by: Int64(n)) }
    func skipped(_ n: Int = 1) { skippedCount.add(n, ordering: .relaxed); skippedMetric.increment(by: Int64(n)) }
    func retried() { retryCount.add(1, ordering: .relaxed); retryMetric.increment() }
    func abandoned(_ n: Int = 1) { abandonedCount.add(n, ordering: .relaxed); abandonedMetric.increment(by: Int64(n)) }

    /// The ingest republished a main-queue message as `copies` partition copies and acknowledged it.
    func ingested(copies: Int) {
        ingestedCount.add(1, ordering: .relaxed)
        ingestedMetric.increment()
        copiesCount.add(copies, ordering: .relaxed)
        copiesMetric.increment(by: Int64(copies))
    }

    /// A partition copy made by an ingest with another `worker.partitions` than this process.
    func partitionCountMismatch() { countMismatchMetric.increment() }

    func deferred(_ platform: Platform, _ n: Int = 1) {
        deferredCount.add(n, ordering: .relaxed)
        deferredMetrics[Self.slot(platform)].increment(by: Int64(n))
    }

    /// A delivery went to its user's backlog.
    func queued() {
        queuedCount.add(1, ordering: .relaxed)
        queuedMetric.increment()
    }

    func republished(_ n: Int) {
        republishedCount.add(n, ordering: .relaxed)
        republishedMetric.increment(by: Int64(n))
    }

    func waiting(_ platform: Platform, _ n: Int) {
        waitingMetrics[Self.slot(platform)].record(n)
    }

    func circuit(provider platform: Platform, app: String?, state: CircuitBreaker.State) {
        Gauge(label: "herald_circuit_state", dimensions: [("provider", platform.provider), ("app", app ?? "default")]).record(state.gaugeValue)
    }

    func connected() { connectionCount.add(1, ordering: .relaxed); connectionMetric.increment() }

    func deadLettered(code: DeadLetterCode) {
        deadLetteredCount.add(1, ordering: .relaxed)
        let counter = deadLetterMetrics.withLock { counters in
            if let counter = counters[code.rawValue] { return counter }
            let counter = Counter(label: "herald_messages_dead_lettered_total", dimensions: [("code", code.rawValue)])
            counters[code.rawValue] = counter
            return counter
        }
        counter.increment()
    }

    /// Terminal outcomes and the providers' answer times of one turn of the delivery engine,
    /// counted at once.
    struct Outcomes {
        var sent = 0
        var tokenDead = 0
        var failed = 0
        /// Publish→sent of the sent deliveries whose message said when it was published.
        var latencies: [Duration] = []
        /// The providers' answer times, by platform slot (``WorkerMetrics/slot(_:)``).
        var answerTimes: [[Duration]] = []

        var isEmpty: Bool { sent == 0 && tokenDead == 0 && failed == 0 && answerTimes.isEmpty }

        /// A provider answered (any outcome) `time` after the engine sent the delivery.
        mutating func answered(_ platform: Platform, after time: Duration) {
            if answerTimes.isEmpty { answerTimes = Array(repeating: [], count: WorkerMetrics.platforms.count) }
            answerTimes[WorkerMetrics.slot(platform)].append(time)
        }

        mutating func add(_ outcome: DeliveryOutcome, publishedAt: Date?, now: Date) {
            switch outcome {
            case .sent:
                sent += 1
                if let publishedAt { latencies.append(.nanoseconds(Int64(max(0, now.timeIntervalSince(publishedAt)) * 1e9))) }
            case .tokenDead:
                tokenDead += 1
            case .permanentFailure, .retryAfter:
                failed += 1
            }
        }
    }

    /// Counts the terminal outcomes of a turn.
    func record(_ outcomes: Outcomes) {
        if outcomes.sent > 0 {
            deliveredCount.add(outcomes.sent, ordering: .relaxed)
            sentMetric.increment(by: Int64(outcomes.sent))
        }
        if outcomes.tokenDead > 0 {
            tokenDeadCount.add(outcomes.tokenDead, ordering: .relaxed)
            tokenDeadMetric.increment(by: Int64(outcomes.tokenDead))
        }
        if outcomes.failed > 0 {
            failedCount.add(outcomes.failed, ordering: .relaxed)
            failedMetric.increment(by: Int64(outcomes.failed))
        }
        for (times, (_, histogram, timer)) in zip(outcomes.answerTimes, answers) where !times.isEmpty {
            histogram.record(times)
            for time in times { timer.recordNanoseconds(Self.nanoseconds(time)) }
        }
        guard !outcomes.latencies.isEmpty else { return }
        latency.record(outcomes.latencies)
        for value in outcomes.latencies { latencyMetric.recordNanoseconds(Self.nanoseconds(value)) }
    }

    /// `platform`'s place in ``platforms`` and in every per-platform list.
    private static func slot(_ platform: Platform) -> Int { platforms.firstIndex(of: platform)! }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.attoseconds / 1_000_000_000 + duration.components.seconds * 1_000_000_000
    }

    /// The providers' answer times together: each non-empty bucket by its upper edge, in order.
    var answerDistribution: [(upTo: Duration, count: Int)] {
        var merged: [Duration: Int] = [:]
        for (_, histogram, _) in answers {
            for bucket in histogram.distribution { merged[bucket.upTo, default: 0] += bucket.count }
        }
        return merged.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    func inFlight(messages: Int, deliveries: Int) {
        messagesInFlightMetric.record(messages)
        deliveriesInFlightMetric.record(deliveries)
    }

    func snapshot(messagesInFlight: Int, deliveriesInFlight: Int) -> WorkerStatistics {
        var s = WorkerStatistics()
        s.consumed = consumedCount.load(ordering: .relaxed)
        s.acked = ackedCount.load(ordering: .relaxed)
        s.deadLettered = deadLetteredCount.load(ordering: .relaxed)
        s.duplicatesDropped = duplicateCount.load(ordering: .relaxed)
        s.noRecipients = noRecipientsCount.load(ordering: .relaxed)
        s.requeued = requeuedCount.load(ordering: .relaxed)
        s.delivered = deliveredCount.load(ordering: .relaxed)
        s.skipped = skippedCount.load(ordering: .relaxed)
        s.tokenDead = tokenDeadCount.load(ordering: .relaxed)
        s.failed = failedCount.load(ordering: .relaxed)
        s.retries = retryCount.load(ordering: .relaxed)
        s.abandoned = abandonedCount.load(ordering: .relaxed)
        s.connections = connectionCount.load(ordering: .relaxed)
        s.ingested = ingestedCount.load(ordering: .relaxed)
        s.partitionCopies = copiesCount.load(ordering: .relaxed)
        s.deferred = deferredCount.load(ordering: .relaxed)
        s.republished = republishedCount.load(ordering: .relaxed)
        s.queued = queuedCount.load(ordering: .relaxed)
        s.messagesInFlight = messagesInFlight
        s.deliveriesInFlight = deliveriesInFlight
        s.latencySamples = latency.count
        s.latencyP50 = latency.percentile(0.50)
        s.latencyP99 = latency.percentile(0.99)
        for (platform, histogram, _) in answers where histogram.count > 0 {
            s.providerAnswers[platform] = WorkerStatistics.AnswerTimes(
                count: histogram.count, p50: histogram.percentile(0.50), p99: histogram.percentile(0.99))
        }
        return s
    }
}
