import ArgumentParser
import Foundation
import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldPostgres
import HeraldStore
import HeraldWorker
import Logging

/// `herald bench`: the throughput benchmark (not a test). In its own queues, on the configured
/// broker and database:
/// 1. a bare consumer that only acknowledges (same prefetch and ack coalescing as the worker)
///    drains N published events (`--bare-rounds` times, the median counts);
/// 2. the full pipeline with the null sender drains N events (`--rounds` times, the journal
///    growing): events/s, deliveries/s, the ratio, and per delivery the worker's CPU,
///    PostgreSQL's and RabbitMQ's CPU, WAL bytes and row writes; after each run the journal is
///    checked against the workload (``BenchCheck``), and any difference fails the bench;
/// 3. publish→sent latency with events published at a steady 2,000/s, and at half the rate the
///    pipeline reached;
/// and on request: throughput by lanes (`--lanes`), a broadcast to many devices
/// (`--broadcast`), the real APNs/FCM senders against a `herald sandbox` child process
/// (`--providers`, also with the sandbox answering after a delay), and peak RSS with a backlog
/// waiting in the broker (`--backlog`); or, with `--burst`, alone: busy users' bursts published
/// before quiet users' pushes, the real senders against the sandbox answering after a delay
/// (``BenchRunner/burst(_:lanes:)``). It refuses a database whose backlog table is not empty
/// (``BenchPreflight``). It prints PostgreSQL's durability settings with its
/// figures (they move them). `--full` does all of it with the figures
/// docs/performance.md records. Build with `swift build -c release` for figures worth writing
/// down.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the pipeline against a bare consumer on the same broker.",
        discussion: """
            Uses the configured broker and database (give it a scratch database: it adds bench \
            devices, which it deletes afterwards, and journal rows, which it keeps so that runs \
            in a row measure a growing journal). Templates must be imported; the event id must \
            have a ru-RU template. CPU figures read /proc of this process and of the local \
            postgres and beam.smp processes. Ctrl-C or SIGTERM stops it: its queues and devices \
            are deleted before it exits with status 130 (a second signal exits at once). After \
            each throughput run it checks the journal against the workload (deliveries per \
            message, no delivery key twice, no dead letters) and exits with status 1 when \
            anything differs. It prints PostgreSQL's fsync, synchronous_commit and \
            full_page_writes: figures measured with them off are not a durable deployment's.
            """
    )

    @Option(help: "Events per throughput run.")
    var events: Int = 100_000

    @Option(help: "Users (one device each).")
    var users: Int = 10_000

    @Option(help: "Devices a broadcast event of the workload reaches.")
    var broadcastDevices: Int = 20

    @Option(help: "Groups of broadcast devices: the providers runs are repeated with the broadcasts taking turns on them (1: no such runs).")
    var broadcastGroups: Int = 50

    @Option(
        help:
            "Lanes of the pipeline (default 256; the real senders' runs: what they carry at once, as the worker; a --burst run alone: the worker's worker.threads, 64 unless configured)."
    )
    var threads: Int?

    @Option(help: "Prefetch of both consumers (default 500; a --burst run alone: the worker's amqp.prefetch, 300 unless configured).")
    var prefetch: Int?

    @Option(help: "Events of each latency run.")
    var latencyEvents: Int = 20_000

    @Option(help: "Publish rate of the first latency run, events per second (the second runs at half the pipeline's rate).")
    var latencyRate: Int = 2_000

    @Option(help: "Event id of the generated events.")
    var eventId: String = "TransferIssued"

    @Option(help: "Pipeline runs in a row (the journal grows between them).")
    var rounds: Int = 1

    @Option(help: "Bare consumer runs, of which the median counts (default: as many as the pipeline's rounds).")
    var bareRounds: Int?

    @Option(help: "Throughput by lanes: comma-separated lane counts, e.g. 1,8,64,256.")
    var lanes: String?

    @Option(help: "Events per lanes run.")
    var lanesEvents: Int = 20_000

    @Option(help: "One broadcast event to this many devices: time until every delivery is recorded.")
    var broadcast: Int = 0

    @Option(help: "This many events through the partitioned path (--ingest-partitions queues, one process): the ingest's rate apart.")
    var ingest: Int = 0

    @Option(help: "Partition queues of the --ingest run.")
    var ingestPartitions: Int = 8

    @Flag(help: "Also run the real APNs/FCM senders against a herald sandbox child process.")
    var providers = false

    @Option(help: "Events of each providers run.")
    var providerEvents: Int = 20_000

    @Option(help: "Sandbox response delays of the providers runs, comma-separated (e.g. 0,30ms).")
    var providerDelays: String = "0,30ms"

    @Option(help: "Messages waiting in the broker for the peak-RSS run (0: no such run).")
    var backlog: Int = 0

    @Flag(
        help:
            "The burst run alone (with --full, after the rest): busy users' pushes published first, then the quiet users', the real APNs/FCM senders against a herald sandbox answering after --burst-delay."
    )
    var burst = false

    @Option(help: "Users whose bursts are published first (--burst).")
    var busyUsers: Int = 1

    @Option(help: "Pushes each busy user gets (--burst).")
    var busyPushes: Int = 600

    @Option(help: "Users with one push each, published after the bursts (--burst).")
    var quietUsers: Int = 300

    @Option(help: "How long the sandbox takes to answer in the burst run (--burst).")
    var burstDelay: String = "30ms"

    @Flag(help: "Publish every push of the burst run before its worker starts (--burst): the bursts are parked all at once.")
    var publishFirst = false

    @Flag(help: "Delete the rows an earlier run left in the backlog table (and their queued journal rows) instead of refusing to start.")
    var discardBacklog = false

    @Flag(help: "Everything docs/performance.md records: --rounds 5 --lanes 1,8,64,256 --broadcast 100000 --providers --backlog 1000000 --burst.")
    var full = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard events > 0, users >= 3, broadcastDevices >= 1, broadcastDevices <= users, broadcastGroups >= 1, (threads ?? 1) >= 1,
            (1...65_535).contains(prefetch ?? 1)
        else {
            throw ValidationError("events, users (≥ 3), broadcast devices (≤ users) and groups, threads and prefetch must be positive")
        }
        guard rounds >= 1, (bareRounds ?? 1) >= 1, latencyEvents >= 1, latencyRate >= 1, lanesEvents >= 1, providerEvents >= 1, broadcast >= 0, backlog >= 0
        else {
            throw ValidationError("rounds, bare rounds, latency events and rate, lanes events and provider events must be positive")
        }
        guard laneCounts != nil else { throw ValidationError("--lanes takes comma-separated positive numbers, e.g. 1,8,64,256") }
        guard ingest >= 0, (1...PartitionLayout.maximumCount).contains(ingestPartitions) else {
            throw ValidationError("--ingest takes a number of events (0: no such run) and --ingest-partitions 1 to \(PartitionLayout.maximumCount)")
        }
        guard delays != nil else { throw ValidationError("--provider-delays takes comma-separated durations, e.g. 0,30ms") }
        if let problem = BurstShape.problem(busyUsers: busyUsers, busyPushes: busyPushes, quietUsers: quietUsers, delay: burstDelay) {
            throw ValidationError(problem)
        }
    }

    /// The burst run without the throughput phases before it.
    private var burstOnly: Bool { burst && !full }

    private var burstShape: BurstShape {
        let delay = Settings.parseDuration(burstDelay.trimmingCharacters(in: .whitespaces)) ?? .milliseconds(30)
        return BurstShape(busyUsers: busyUsers, busyPushes: busyPushes, quietUsers: quietUsers, delayMilliseconds: delay.seconds * 1000)
    }

    private var laneCounts: [Int]? {
        guard let text = lanes ?? (full ? "1,8,64,256" : nil) else { return [] }
        let values = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard values.allSatisfy({ ($0 ?? 0) >= 1 }) else { return nil }
        return values.compactMap { $0 }
    }

    private var delays: [Duration]? {
        let values = providerDelays.split(separator: ",").map { Settings.parseDuration($0.trimmingCharacters(in: .whitespaces)) }
        guard values.allSatisfy({ $0 != nil }) else { return nil }
        return values.compactMap { $0 }
    }

    /// The lanes of a run with the real senders: `--threads`, or the worker's default, what the
    /// senders carry at once (``RuntimeSettings/lanes(_:sender:)``).
    private func providerLanes(_ sender: any PushSender) -> Int { threads ?? sender.concurrency ?? 256 }
    func run() async throws {
        let (settings, configuredLogger) = try global.settings(connection, logger: "herald.bench")
        var logger = configuredLogger
        if settings.string(.logLevel) == nil { logger.logLevel = .warning }
        let runID = String(UInt32.random(in: .min ... .max), radix: 16)
        var workload = BenchWorkload(runID: runID, users: users, broadcastDevices: broadcastDevices, eventId: eventId)
        workload.broadcastGroups = min(broadcastGroups, users / broadcastDevices)
        var base = try RuntimeSettings.worker(settings)
        base.topology = HeraldTopology(queue: "herald.bench.\(runID)", queueType: base.topology.queueType)
        base.lanes = threads ?? (burstOnly ? base.lanes : 256)
        base.prefetch = prefetch.map(UInt16.init) ?? (burstOnly ? base.prefetch : 500)
        let storeConfiguration = try RuntimeSettings.store(settings)
        let store = try Store(configuration: storeConfiguration, logger: logger)
        let amqp = try await AMQPConnection.connect(base.amqp, logger: logger)
        let probe = BenchProbe(client: try PostgresClient(configuration: storeConfiguration.database))
        var differences: [String] = []
        let runner = BenchRunner(amqp: amqp, store: store, probe: probe, workload: workload, base: base, logger: logger, quiet: json)
        do {
            try await store.migrate()
            let discarded = try await BenchPreflight.check(client: probe.client, discardBacklog: discardBacklog)
            if discarded > 0 { runner.progress("deleted \(discarded) backlog rows an earlier run left") }
            let catalog = try await store.templateCache.catalog()
            guard (try? catalog.template(eventId: eventId, culture: "ru-RU", platform: .ios)) != nil else {
                throw ValidationError("no ru-RU template for \(eventId): run `herald templates import templates/` first")
            }
            let result = try await measureUntilInterrupted(runner, settings: settings)
            runner.progress("cleaning up")
            try await runner.cleanUp()
            await runner.close()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                Console.out(String(decoding: try encoder.encode(result), as: UTF8.self))
            } else {
                Console.out(result.table)
            }
            differences = result.differences
        } catch {
            try? await runner.cleanUp()
            await runner.close()
            if let interrupted = error as? BenchInterrupted {
                Console.error("herald bench: stopped by \(interrupted.signal); run \(runID)'s queues and devices deleted")
                throw ExitCode(130)
            }
            Console.error("herald bench: \(error)")
            throw ExitCode.failure
        }
        guard differences.isEmpty else {
            Console.error("herald bench: the journal differs from what the workload makes; these figures are not to be trusted:")
            for difference in differences { Console.error("  \(difference)") }
            throw ExitCode.failure
        }
    }

    /// ``measure(_:settings:)``, which SIGINT or SIGTERM stops: the phase under way ends (its
    /// worker stops) and ``run()`` deletes the run's queues and devices, which would otherwise
    /// stay in the broker with their messages. A second signal ends the process at once.
    private func measureUntilInterrupted(_ runner: BenchRunner, settings: Settings) async throws -> BenchResult {
        let measurement = Task { try await measure(runner, settings: settings) }
        let watcher = Task { () -> String? in
            guard let name = await TerminationSignals.next() else { return nil }
            Console.error("herald bench: \(name): stopping, then deleting the run's queues and devices (again to exit at once)")
            measurement.cancel()
            return name
        }
        let outcome = await measurement.result
        watcher.cancel()
        if let signal = await watcher.value { throw BenchInterrupted(signal: signal) }
        return try outcome.get()
    }

    private func measure(_ runner: BenchRunner, settings: Settings) async throws -> BenchResult {
        let workload = runner.workload
        var result = BenchResult(
            build: Self.build, date: ISO8601DateFormatter().string(from: Date()), machine: BenchResult.Machine.current(),
            events: events, deliveriesPerRun: (0..<events).reduce(0) { $0 + workload.nominalDeliveries($1) }, users: users,
            broadcastDevices: broadcastDevices, queueType: runner.base.topology.queueType.rawValue, prefetch: Int(runner.base.prefetch),
            lanes: runner.base.lanes
        )
        result.postgres = await runner.probe.postgresSettings()
        runner.progress("PostgreSQL: \(result.postgres?.summary ?? "settings unknown")")
        if burstOnly {
            result.burst = try await runner.burst(
                BurstWorkload(runID: workload.runID, shape: burstShape, eventId: eventId), lanes: runner.base.lanes, publishFirst: publishFirst)
            result.peakRSSMegabytes = result.burst?.peakRSSMegabytes
            return result
        }
        runner.progress("seeding \(users) devices")
        try await runner.store.devices.importDevices(workload.registrations)

        // 1. Bare consumer, as many rounds as the pipeline (one sample moves with the host as
        // much as a pipeline round does).
        let pipelineRounds = max(rounds, full ? 5 : 1)
        for round in 1...(bareRounds ?? pipelineRounds) {
            runner.progress("bare consumer, round \(round)")
            result.bareRounds.append(try await runner.bare(events: events, prefetch: Int(runner.base.prefetch)))
        }

        // 2. Pipeline, null sender, `rounds` times.
        for round in 1...pipelineRounds {
            runner.progress("pipeline, round \(round)")
            result.rounds.append(try await runner.pipeline("pipeline\(round)", events: events, lanes: runner.base.lanes, sender: NullSender()))
        }

        // 3. Latency at a steady rate, and at half the pipeline's.
        runner.progress("latency run: \(latencyEvents) events at \(latencyRate)/s")
        result.latency.append(try await runner.latency(events: latencyEvents, rate: latencyRate))
        if let maxRate = result.pipeline?.eventRate {
            let half = max(1, Int(maxRate / 2))
            runner.progress("latency run: \(latencyEvents) events at \(half)/s (half the pipeline's rate)")
            result.latency.append(try await runner.latency(events: latencyEvents, rate: half))
        }

        // 4. Throughput by lanes.
        for count in laneCounts ?? [] {
            runner.progress("lanes \(count): \(lanesEvents) events")
            var run = try await runner.pipeline("lanes\(count)", events: lanesEvents, lanes: count, sender: NullSender())
            run.lanes = count
            result.byLanes.append(run)
        }

        // 5. Peak RSS with a backlog in the broker, before the large broadcast's devices are
        // added: the broadcast audience's snapshot holds every deliverable subscription (~0.6
        // KB each), so with them this would measure the audience more than the backlog; the
        // broadcasts report their own peak.
        let backlog = full ? max(self.backlog, 1_000_000) : self.backlog
        if backlog > 0 {
            runner.progress("backlog: \(backlog) messages waiting")
            result.backlog = try await runner.backlog(messages: backlog)
        }

        // 6. The real senders, before the large broadcast's devices are added (the workload's
        // broadcasts would then be sent in windows over all of them).
        if providers || full {
            for delay in delays ?? [] {
                runner.progress("providers: herald sandbox answering after \(delay)")
                let sandbox = try await BenchSandbox(responseDelay: delay)
                do {
                    for spread in workload.broadcastGroups > 1 ? [false, true] : [false] {
                        let sender = try sandbox.providerSender(logger: runner.logger)
                        var run = try await runner.pipeline(
                            "providers\(Int(delay.seconds * 1000))\(spread ? "-spread" : "")", events: providerEvents, lanes: providerLanes(sender),
                            sender: sender, sandbox: sandbox, spread: spread
                        )
                        run.lanes = providerLanes(sender)
                        run.sandboxDelayMilliseconds = delay.seconds * 1000
                        run.broadcastGroups = spread ? workload.broadcastGroups : 1
                        run.perUserOrderBound = workload.perUserOrderBound(roundTrip: delay, spread: spread).map {
                            $0 * Double(run.deliveries) / Double(run.events)
                        }
                        result.providers.append(run)
                    }
                } catch {
                    sandbox.stop()
                    throw error
                }
                sandbox.stop()
            }
        }

        // 7. A broadcast to many devices: the null sender, then (with --providers) the real
        // senders against the sandbox at the longest of --provider-delays.
        let broadcastDevices = full ? max(broadcast, 100_000) : broadcast
        if broadcastDevices > 0 {
            try await runner.seedBroadcastDevices(broadcastDevices)
            runner.progress("broadcast to \(broadcastDevices) devices, null sender")
            result.broadcasts.append(
                try await runner.broadcast(devices: broadcastDevices, sender: NullSender(), lanes: runner.base.lanes, label: "null sender", sandbox: nil))
            if providers || full, let delay = delays?.max() {
                runner.progress("broadcast to \(broadcastDevices) devices, APNs/FCM senders to the sandbox answering after \(delay)")
                let sandbox = try await BenchSandbox(responseDelay: delay)
                do {
                    let sender = try sandbox.providerSender(logger: runner.logger)
                    result.broadcasts.append(
                        try await runner.broadcast(
                            devices: broadcastDevices, sender: sender, lanes: providerLanes(sender),
                            label: "APNs/FCM senders, sandbox at \(Int(delay.seconds * 1000)) ms, \(providerLanes(sender)) lanes", sandbox: sandbox))
                } catch {
                    sandbox.stop()
                    throw error
                }
                sandbox.stop()
            }
        }

        // The partitioned path, the ingest's rate apart.
        if ingest > 0 {
            result.ingest = try await runner.ingest(events: ingest, partitions: ingestPartitions)
        }

        // 8. The burst, last: it adds devices of its own.
        if burst || full {
            runner.progress("burst: \(busyUsers) × \(busyPushes) pushes, then \(quietUsers) × 1")
            result.burst = try await runner.burst(
                BurstWorkload(runID: workload.runID, shape: burstShape, eventId: eventId), lanes: runner.base.lanes, publishFirst: publishFirst)
        }

        // The phases that measure their own peak reset the high-water mark: the run's is the
        // highest of theirs and what followed the last reset.
        let peaks =
            [BenchRunner.peakRSSMegabytes(), result.backlog?.peakRSSMegabytes, result.burst?.peakRSSMegabytes] + result.broadcasts.map(\.peakRSSMegabytes)
        result.peakRSSMegabytes = peaks.compactMap { $0 }.max()
        result.summarize()
        return result
    }

    static var build: String {
        #if DEBUG
            "debug"
        #else
            "release"
        #endif
    }
}
