import Foundation
import HeraldStore

/// What `herald bench` measured; printed as a table or, with `--json`, as JSON (the input of
/// `scripts/bench-plots.py`, and of `../shared/bench/compare.sh`, which reads `bareRate`,
/// `pipelineEventRate` and `pipelineDeliveryRate`).
struct BenchResult: Codable, Sendable {
    struct Machine: Codable, Sendable {
        var cores: Int
        var memoryGigabytes: Double
        var kernel: String
        /// The load average when the run began (other work on the box skews every figure).
        var loadAverage: String

        static func current() -> Machine {
            var system = utsname()
            uname(&system)
            let kernel = withUnsafeBytes(of: &system.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
            return Machine(
                cores: ProcessInfo.processInfo.activeProcessorCount, memoryGigabytes: Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824,
                kernel: kernel, loadAverage: load
            )
        }
    }

    struct Bare: Codable, Sendable {
        var seconds: Double
        var rate: Double
    }

    /// PostgreSQL's durability settings the run had (`SHOW`): figures measured with them off
    /// are not what a deployment that keeps its commits gets.
    struct PostgresSettings: Codable, Sendable, Equatable {
        var fsync: String
        var synchronousCommit: String
        var fullPageWrites: String

        var durable: Bool { [fsync, synchronousCommit, fullPageWrites].allSatisfy { $0 == "on" } }
        var summary: String {
            "fsync=\(fsync), synchronous_commit=\(synchronousCommit), full_page_writes=\(fullPageWrites)\(durable ? " (durable)" : " (NOT durable)")"
        }
    }

    struct Run: Codable, Sendable {
        var events: Int
        var deliveries: Int
        var seconds: Double
        var eventRate: Double
        var deliveryRate: Double
        var costs: BenchProbe.Costs
        var lanes: Int?
        var sandboxDelayMilliseconds: Double?
        var sandboxCPUMicroseconds: Double?
        /// Groups the broadcasts took turns on (1: all to the same devices; see ``BenchWorkload``).
        var broadcastGroups: Int?
        /// Deliveries a second that per-user order allows at the sandbox's delay (nil at 0 ms).
        var perUserOrderBound: Double?
        /// From the engine's sending a delivery to its taking the answer (the HTTP client's queue
        /// and the round trip; the null sender's answer is one engine turn), both providers.
        var answerP50Milliseconds: Double?
        var answerP99Milliseconds: Double?
        /// The mean of the same, from the histogram's buckets (each 2 % wide).
        var answerMeanMilliseconds: Double?
        var failed: Int?
        /// Deliveries that waited in their users' backlog (busy users: a broadcast's devices).
        var queued: Int?
        /// What the run's events should have made (``BenchWorkload/expectedDeliveries(count:salt:spread:)``),
        /// the journal's distinct deliveries of its messages afterwards, and the messages the
        /// worker sent to the dead-letter queue.
        var expectedDeliveries: Int?
        var journaledDeliveries: Int?
        var deadLetters: Int?
        /// What the check found wrong (``BenchCheck``); empty when the run did what it should.
        var differences: [String] = []
    }

    struct Bucket: Codable, Sendable {
        var upToMilliseconds: Double
        var count: Int
    }

    struct Latency: Codable, Sendable {
        var rate: Int
        var events: Int
        var p50Milliseconds: Double?
        var p99Milliseconds: Double?
        var histogram: [Bucket] = []
    }

    struct Broadcast: Codable, Sendable {
        var label: String
        var devices: Int
        var deliveries = 0
        var seconds = 0.0
        var workerCPUMicroseconds: Double?
        var sandboxCPUMicroseconds: Double?
        /// The worker's peak RSS during the broadcast: the windows in flight (or, below
        /// `worker.broadcast_memory` subscriptions, the snapshot of every one).
        var peakRSSMegabytes: Double?
        /// Sent in windows: the journal's account of it (selected, sent, failed, waiting).
        var windowed: BroadcastProgress?
        /// Deliveries a circuit breaker held back (it opened): 0 unless a provider failed.
        var deferred = 0
        /// Other users' events published during it (200 a second), and their publish→sent p99.
        var otherEvents = 0
        var otherP99Milliseconds: Double?
    }

    struct Backlog: Codable, Sendable {
        var messages: Int
        var consumed = 0
        var seconds = 0.0
        var peakRSSMegabytes: Double?
    }

    var build: String
    var date: String
    var machine: Machine
    var events: Int
    /// Nominal: three deliveries per three-user event. A run's ``Run/expectedDeliveries`` is
    /// exact (its three users may repeat one).
    var deliveriesPerRun: Int
    var users: Int
    var broadcastDevices: Int
    var queueType: String
    var prefetch: Int
    var lanes: Int
    var postgres: PostgresSettings?
    /// The bare consumer's rounds; ``bare`` is their median.
    var bareRounds: [Bare] = []
    var bare: Bare?
    /// The pipeline runs with the null sender, in order (the journal growing).
    var rounds: [Run] = []
    var latency: [Latency] = []
    var byLanes: [Run] = []
    var broadcasts: [Broadcast] = []
    var providers: [Run] = []
    var backlog: Backlog?
    /// `--burst` (``Burst``).
    var burst: Burst?
    /// `--ingest` (``Ingest``).
    var ingest: Ingest?
    var peakRSSMegabytes: Double?

    /// The figure of record: the median round (the journal's growth shows in `rounds`).
    var pipeline: Run? {
        guard !rounds.isEmpty else { return nil }
        return rounds.sorted { $0.eventRate < $1.eventRate }[rounds.count / 2]
    }

    /// The headline figures, under the keys `../shared/bench/compare.sh` reads (filled by
    /// ``summarize()``).
    var bareRate: Double?
    var pipelineEventRate: Double?
    var pipelineDeliveryRate: Double?
    var ratio: Double?

    /// Every difference a checked run found, named by its run.
    var differences: [String] {
        var named: [(name: String, run: Run)] = []
        for (index, run) in rounds.enumerated() { named.append(("pipeline round \(index + 1)", run)) }
        for run in byLanes { named.append(("lanes \(run.lanes ?? 0)", run)) }
        for run in providers {
            let spread = (run.broadcastGroups ?? 1) > 1 ? " spread" : ""
            named.append(("providers \(Int(run.sandboxDelayMilliseconds ?? 0)) ms\(spread)", run))
        }
        return named.flatMap { entry in entry.run.differences.map { "\(entry.name): \($0)" } } + (burst?.differences ?? []).map { "burst: \($0)" }
    }

    mutating func summarize() {
        bare = bareRounds.isEmpty ? nil : bareRounds.sorted { $0.rate < $1.rate }[bareRounds.count / 2]
        bareRate = bare?.rate
        pipelineEventRate = pipeline?.eventRate
        pipelineDeliveryRate = pipeline?.deliveryRate
        if let bare, let pipeline { ratio = pipeline.eventRate / bare.rate }
    }

    // MARK: Table

    var table: String {
        var lines: [String] = []
        lines.append(
            "Herald benchmark (\(build) build, \(date); \(machine.cores) cores, \(String(format: "%.0f", machine.memoryGigabytes)) GiB, load average at start \(machine.loadAverage))"
        )
        if rounds.isEmpty, let burst {
            // `--burst` alone.
            lines.append("  broker: \(queueType) durable queue, persistent messages; PostgreSQL: \(postgres?.summary ?? "settings unknown")")
            return (lines + burst.lines).joined(separator: "\n")
        }
        lines.append(
            "  workload: \(events) events (80% one user, 15% three users, 5% broadcast to \(broadcastDevices) devices) → about \(deliveriesPerRun) deliveries; \(users) users"
        )
        lines.append(
            "  broker: \(queueType) durable queue, persistent messages, prefetch \(prefetch); pipeline: \(lanes) lanes, null sender"
        )
        lines.append("  PostgreSQL: \(postgres?.summary ?? "settings unknown")")
        lines.append("")
        lines.append("  run                              seconds    events/s   deliveries/s   vs bare   journaled / expected, dead letters")
        if let bare {
            let label = bareRounds.count > 1 ? "bare consumer, median of \(bareRounds.count)" : "bare consumer (consume + ack)"
            lines.append(
                "  \(label.padding(toLength: 29, withPad: " ", startingAt: 0))\(f(bare.seconds, 9, 2))  \(f(bare.rate, 10, 0))              -         -")
        }
        for (index, round) in rounds.enumerated() {
            let label = rounds.count == 1 ? "full pipeline (null sender)" : "full pipeline, round \(index + 1)"
            lines.append(
                "  \(label.padding(toLength: 31, withPad: " ", startingAt: 0))\(f(round.seconds, 7, 2))  \(f(round.eventRate, 10, 0))  \(f(round.deliveryRate, 13, 0))  \(ratio(round))   \(checked(round))"
                    + ((round.queued ?? 0) > 0 ? "  (\(round.queued!) waited in a busy user's backlog)" : "")
            )
        }
        if rounds.count >= 5 {
            let change = (rounds[4].eventRate / rounds[1].eventRate - 1) * 100
            lines.append("  round 5 vs round 2: \(String(format: "%+.1f%%", change))")
        }
        if let pipeline {
            let c = pipeline.costs
            lines.append("")
            lines.append(
                "  per delivery (pipeline)        worker CPU \(us(c.workerCPUMicroseconds)), PostgreSQL CPU \(us(c.postgresCPUMicroseconds)), RabbitMQ CPU \(us(c.brokerCPUMicroseconds))"
            )
            lines.append(
                "                                 WAL \(c.walBytes.map { String(format: "%.0f bytes", $0) } ?? "-"), row writes \(c.rowWrites.map { String(format: "%.2f", $0) } ?? "-")"
            )
            lines.append(
                "  cores busy                     worker \(cores(c.workerCores)), PostgreSQL \(cores(c.postgresCores)), RabbitMQ \(cores(c.brokerCores))")
        }
        for run in latency {
            lines.append(
                "  publish→sent at a steady \(run.rate) events/s (\(run.events) events): p50 \(ms(run.p50Milliseconds)), p99 \(ms(run.p99Milliseconds))")
        }
        if !byLanes.isEmpty {
            lines.append("")
            lines.append("  lanes    events/s   deliveries/s")
            for run in byLanes { lines.append("  \(f(Double(run.lanes ?? 0), 5, 0))  \(f(run.eventRate, 10, 0))  \(f(run.deliveryRate, 13, 0))") }
        }
        if !providers.isEmpty {
            lines.append("")
            lines.append(
                "  real APNs/FCM senders → herald sandbox     deliveries/s   answer p50 / p99   in flight   worker CPU/delivery   sandbox CPU/delivery   order bound"
            )
            for run in providers {
                var label = "sandbox answering after \(String(format: "%.0f", run.sandboxDelayMilliseconds ?? 0)) ms\(run.lanes.map { ", \($0) lanes" } ?? "")"
                if let groups = run.broadcastGroups, groups > 1 { label = "  … broadcasts over \(groups) groups" }
                let answer = "\(run.answerP50Milliseconds.map { f($0, 0, 1) } ?? "-") / \(run.answerP99Milliseconds.map { f($0, 0, 1) } ?? "-") ms"
                let inFlight = run.answerMeanMilliseconds.map { f(run.deliveryRate * $0 / 1000, 0, 0) } ?? "-"
                lines.append(
                    "  \(label.padding(toLength: 41, withPad: " ", startingAt: 0))\(f(run.deliveryRate, 14, 0))   \(answer.leftPad(16))   \(inFlight.leftPad(9))   \(us(run.costs.workerCPUMicroseconds).leftPad(19))   \(us(run.sandboxCPUMicroseconds).leftPad(20))   \((run.perUserOrderBound.map { f($0, 0, 0) } ?? "-").leftPad(11))\(run.failed.map { $0 > 0 ? "  (\($0) not sent)" : "" } ?? "")"
                )
            }
            lines.append(
                "  (answer: from the engine's sending to its taking the answer; in flight: deliveries/s × the mean answer time; order bound: what one push in flight per user allows at the delay)"
            )
            if let null = pipeline { lines.append("  (null sender, same pipeline: \(f(null.deliveryRate, 0, 0)) deliveries/s)") }
            lines += providerRatios
        }
        if let run = ingest {
            lines.append("")
            lines.append(
                "  partitioned path (worker.partitions \(run.partitions), one process, null sender): the ingest copied \(run.events) events in \(f(run.ingestSeconds, 0, 2)) s (\(f(run.ingestRate, 0, 0)) events/s); every delivery after \(f(run.seconds, 0, 2)) s (\(f(run.eventRate, 0, 0)) events/s, \(run.deliveries) deliveries)"
            )
        }
        for run in broadcasts {
            lines.append(
                "  broadcast to \(run.devices) devices, \(run.label): every delivery recorded after \(String(format: "%.2f s", run.seconds)) (\(run.deliveries) sent, \(String(format: "%.0f", Double(run.deliveries) / max(run.seconds, 0.001))) deliveries/s), peak RSS \(run.peakRSSMegabytes.map { String(format: "%.0f MB", $0) } ?? "-"), held by a breaker \(run.deferred)"
                    + (run.windowed.map { " — in windows, journal: \($0.selected) selected, \($0.sent) sent, \($0.failed) failed, \($0.waiting) waiting" }
                        ?? " — in memory")
            )
            if run.otherEvents > 0 {
                lines.append(
                    "    other users meanwhile (\(run.otherEvents) events at 200/s): publish→sent p99 \(ms(run.otherP99Milliseconds))"
                        + (latency.first.map { "; quiet, at \($0.rate)/s: p99 \(ms($0.p99Milliseconds))" } ?? ""))
            }
        }
        if let backlog {
            lines.append(
                "  backlog of \(backlog.messages) messages: \(backlog.consumed) consumed in \(String(format: "%.0f s", backlog.seconds)), peak RSS \(backlog.peakRSSMegabytes.map { String(format: "%.0f MB", $0) } ?? "-")"
            )
        }
        if let burst { lines += [""] + burst.lines }
        lines.append("  peak RSS of the run: \(peakRSSMegabytes.map { String(format: "%.0f MB", $0) } ?? "-")")
        return lines.joined(separator: "\n")
    }

    /// Issue 45's figures from the providers runs: the real senders at 0 ms against the null
    /// sender's pipeline, and each delayed run against the 0 ms one. The client's CPU per request
    /// against h2load's is `scripts/sandbox-ceiling.sh`'s (docs/performance.md).
    private var providerRatios: [String] {
        guard let immediate = providers.first(where: { ($0.sandboxDelayMilliseconds ?? 0) == 0 && ($0.broadcastGroups ?? 1) <= 1 }) else { return [] }
        var parts: [String] = []
        if let null = pipeline, null.deliveryRate > 0 {
            parts.append("at 0 ms \(f(immediate.deliveryRate / null.deliveryRate * 100, 0, 0)) % of the null sender (target ≥ 50 %)")
        }
        for run in providers where (run.sandboxDelayMilliseconds ?? 0) > 0 && immediate.deliveryRate > 0 {
            let spread = (run.broadcastGroups ?? 1) > 1 ? ", broadcasts over \(run.broadcastGroups ?? 1) groups" : ""
            parts.append(
                "at \(f(run.sandboxDelayMilliseconds ?? 0, 0, 0)) ms\(spread) \(f(run.deliveryRate / immediate.deliveryRate * 100, 0, 0)) % of 0 ms\(spread.isEmpty ? "" : " (target ≥ 90 %)")"
            )
        }
        return parts.isEmpty ? [] : ["  (real senders: " + parts.joined(separator: "; ") + ")"]
    }

    /// "224996 / 224996, 0" and a mark when the run's check found differences.
    private func checked(_ run: Run) -> String {
        guard let expected = run.expectedDeliveries else { return "-" }
        let count = { (n: Int?) in n.map { String($0) } ?? "?" }
        return "\(count(run.journaledDeliveries)) / \(expected), \(count(run.deadLetters))\(run.differences.isEmpty ? "" : "  DIFFERS")"
    }

    private func ratio(_ run: Run) -> String {
        guard let bare else { return "-" }
        return String(format: "%.0f%%", run.eventRate / bare.rate * 100).leftPad(8)
    }

    private func f(_ value: Double, _ width: Int, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value).leftPad(width)
    }

    private func us(_ value: Double?) -> String { value.map { String(format: "%.1f µs", $0) } ?? "-" }
    private func cores(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "-" }
    private func ms(_ value: Double?) -> String { value.map { String(format: "%.1f ms", $0) } ?? "-" }
}

extension String {
    fileprivate func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
