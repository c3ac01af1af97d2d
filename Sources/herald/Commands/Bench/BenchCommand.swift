import ArgumentParser
import Foundation
import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldPostgres
import HeraldStore
import HeraldWorker
import Logging

/// `herald bench`: the throughput benchmark of issue 4 (not a test). In its own queues:
/// (a) a bare consumer that only acknowledges (same prefetch and ack coalescing as the worker)
/// drains N published events; (b) the full pipeline with the null sender drains the same N;
/// (c) with the worker running, events are published at a steady rate and the publish→sent
/// latency is measured. Prints events/s, deliveries/s, the ratio, p50/p99 latency and peak RSS.
/// Build with `swift build -c release` for figures worth writing down (docs/performance.md).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the pipeline against a bare consumer on the same broker.",
        discussion: """
            Uses the configured broker and database (give it a scratch database: it adds bench \
            devices, which it deletes afterwards, and journal rows). Templates must be imported; \
            the event id must have a ru-RU template.
            """
    )

    @Option(help: "Events per throughput run.")
    var events: Int = 100_000

    @Option(help: "Users (one device each).")
    var users: Int = 10_000

    @Option(help: "Devices a broadcast event reaches.")
    var broadcastDevices: Int = 20

    @Option(help: "Lanes of the pipeline (worker.threads).")
    var threads: Int = 256

    @Option(help: "Prefetch of both consumers.")
    var prefetch: Int = 500

    @Option(help: "Events of the latency run.")
    var latencyEvents: Int = 20_000

    @Option(help: "Publish rate of the latency run, events per second.")
    var latencyRate: Int = 2_000

    @Option(help: "Event id of the generated events.")
    var eventId: String = "TransferIssued"

    @Flag(help: "Print the result as JSON.")
    var json = false

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard events > 0, users >= 3, broadcastDevices >= 1, broadcastDevices <= users, threads >= 1, (1...65_535).contains(prefetch) else {
            throw ValidationError("events, users (≥ 3), broadcast devices (≤ users), threads and prefetch must be positive")
        }
    }

    func run() async throws {
        var settings = try global.settings()
        connection.apply(to: &settings)
        var logger = RuntimeSettings.logger("herald.bench", settings: settings)
        if settings.string(.logLevel) == nil { logger.logLevel = .warning }
        let runID = String(UInt32.random(in: .min ... .max), radix: 16)
        let workload = BenchWorkload(runID: runID, users: users, broadcastDevices: broadcastDevices, eventId: eventId)
        var workerConfiguration = try RuntimeSettings.worker(settings)
        workerConfiguration.topology = HeraldTopology(queue: "herald.bench.\(runID)", queueType: workerConfiguration.topology.queueType)
        workerConfiguration.lanes = threads
        workerConfiguration.prefetch = UInt16(prefetch)
        let store = try Store(configuration: try RuntimeSettings.store(settings), logger: logger)
        let amqp = try await AMQPConnection.connect(workerConfiguration.amqp, logger: logger)
        var queues: [String] = []
        do {
            try await store.migrate()
            let catalog = try await store.templateCache.catalog()
            guard (try? catalog.template(eventId: eventId, culture: "ru-RU", platform: .ios)) != nil else {
                throw ValidationError("no ru-RU template for \(eventId): run `herald templates import templates/` first")
            }
            progress("seeding \(users) devices")
            try await store.devices.importDevices(workload.registrations)
            let deliveriesPerRun = (0..<events).reduce(0) { $0 + workload.deliveries($1) }

            // (a) Bare consumer.
            let bareQueue = "herald.bench.\(runID).bare"
            queues.append(bareQueue)
            try await amqp.declareQueue(AMQPQueue(name: bareQueue, type: workerConfiguration.topology.queueType))
            progress("publishing \(events) events for the bare consumer")
            try await publish(amqp, count: events, exchange: "", routingKey: bareQueue, workload: workload, salt: 1)
            progress("bare consumer")
            let bareSeconds = try await bareConsume(queue: bareQueue, count: events, configuration: workerConfiguration.amqp, logger: logger)

            // (b) Pipeline, same events (bodies differ only by salt), null sender.
            let topology = workerConfiguration.topology
            queues += [topology.queue, topology.deadLetterQueue]
            try await amqp.declare(topology)
            progress("publishing \(events) events for the pipeline")
            try await publish(amqp, count: events, exchange: topology.exchange, routingKey: topology.routingKey, workload: workload, salt: 2)
            progress("pipeline")
            let probe = BenchProbe(client: try PostgresClient(configuration: try RuntimeSettings.store(settings).database))
            let before = await probe.read(settleStatistics: true)
            let (pipelineSeconds, delivered) = try await pipeline(workerConfiguration, store: store, logger: logger) { worker in
                try await wait(until: { worker.statistics.acked + worker.statistics.deadLettered >= events }, what: "the pipeline to drain")
            }
            let costs = BenchProbe.costs(from: before, to: await probe.read(settleStatistics: true), deliveries: delivered)
            await probe.client.close()

            // (c) Latency at a steady rate (the worker consumes while events are published).
            var latencyConfiguration = workerConfiguration
            latencyConfiguration.topology = HeraldTopology(queue: "herald.bench.\(runID).latency", queueType: topology.queueType)
            queues += [latencyConfiguration.topology.queue, latencyConfiguration.topology.deadLetterQueue]
            try await amqp.declare(latencyConfiguration.topology)
            progress("latency run: \(latencyEvents) events at \(latencyRate)/s")
            var p50: Duration?
            var p99: Duration?
            _ = try await pipeline(latencyConfiguration, store: store, logger: logger) { worker in
                try await publishSteadily(amqp, topology: latencyConfiguration.topology, workload: workload)
                try await wait(until: { worker.statistics.acked + worker.statistics.deadLettered >= latencyEvents }, what: "the latency run")
                p50 = worker.statistics.latencyP50
                p99 = worker.statistics.latencyP99
            }

            let synchronousCommit = await Self.synchronousCommit(try RuntimeSettings.store(settings))
            #if DEBUG
            let build = "debug"
            #else
            let build = "release"
            #endif
            let result = BenchResult(
                build: build, date: ISO8601DateFormatter().string(from: Date()), events: events, deliveriesPerRun: deliveriesPerRun, users: users,
                broadcastDevices: broadcastDevices, queueType: topology.queueType.rawValue, prefetch: prefetch, lanes: threads,
                bareSeconds: bareSeconds, bareRate: Double(events) / bareSeconds,
                pipelineSeconds: pipelineSeconds, pipelineEventRate: Double(events) / pipelineSeconds,
                pipelineDeliveryRate: Double(delivered) / pipelineSeconds,
                ratio: (Double(events) / pipelineSeconds) / (Double(events) / bareSeconds),
                latencyEvents: latencyEvents, latencyRate: latencyRate,
                latencyP50Milliseconds: p50.map { $0.seconds * 1000 }, latencyP99Milliseconds: p99.map { $0.seconds * 1000 },
                peakRSSMegabytes: Self.peakRSSMegabytes(), synchronousCommit: synchronousCommit, pipelineCosts: costs
            )
            progress("cleaning up")
            try await cleanUp(amqp: amqp, queues: queues, store: store, workload: workload)
            await amqp.close()
            await store.close()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                Console.out(String(decoding: try encoder.encode(result), as: UTF8.self))
            } else {
                Console.out(result.table)
            }
        } catch {
            try? await cleanUp(amqp: amqp, queues: queues, store: store, workload: workload)
            await amqp.close()
            await store.close()
            Console.error("herald bench: \(error)")
            throw ExitCode.failure
        }
    }

    private func progress(_ text: String) {
        if !json { Console.error("bench: \(text)…") }
    }

    private func publish(_ amqp: AMQPConnection, count: Int, exchange: String, routingKey: String, workload: BenchWorkload, salt: Int) async throws {
        let properties = AMQPProperties(contentType: "application/xml", deliveryMode: .persistent)
        for start in stride(from: 0, to: count, by: 5_000) {
            let batch = (start..<min(count, start + 5_000)).map {
                AMQPOutgoingMessage(exchange: exchange, routingKey: routingKey, body: workload.body($0, salt: salt), properties: properties)
            }
            try await amqp.publishBatch(batch)
        }
    }

    /// Publishes the latency run's events at `latencyRate` per second, each stamped with its
    /// publish time (`timestamp_in_ms`).
    private func publishSteadily(_ amqp: AMQPConnection, topology: HeraldTopology, workload: BenchWorkload) async throws {
        let started = ContinuousClock.now
        let tick = 100  // batches per second
        let perTick = max(1, latencyRate / tick)
        var sent = 0
        while sent < latencyEvents {
            let batch = (sent..<min(latencyEvents, sent + perTick)).map { index in
                let properties = AMQPProperties(
                    contentType: "application/xml", headers: ["timestamp_in_ms": .int(Int64((Date().timeIntervalSince1970 * 1000).rounded()))],
                    deliveryMode: .persistent
                )
                return AMQPOutgoingMessage(exchange: topology.exchange, routingKey: topology.routingKey, body: workload.body(index, salt: 3), properties: properties)
            }
            try await amqp.publishBatch(batch)
            sent += batch.count
            let due = started + .seconds(Double(sent) / Double(latencyRate))
            if due > ContinuousClock.now { try await Task.sleep(until: due, clock: .continuous) }
        }
    }

    /// Seconds a consumer that only acknowledges takes to take `count` messages.
    private func bareConsume(queue: String, count: Int, configuration: AMQPConfiguration, logger: Logger) async throws -> Double {
        let connection = try await AMQPConnection.connect(configuration, logger: logger)
        let started = ContinuousClock.now
        let consumer = try await connection.consume(queue: queue, prefetch: UInt16(prefetch))
        var received = 0
        for try await delivery in consumer {
            try consumer.ack(delivery.deliveryTag)
            received += 1
            if received == count { break }
        }
        let elapsed = ContinuousClock.now - started
        try? await consumer.cancel()
        await connection.close()
        return elapsed.seconds
    }

    /// Runs a worker with the null sender while `body` runs; returns the seconds and the
    /// deliveries made.
    private func pipeline(
        _ configuration: WorkerConfiguration, store: Store, logger: Logger, _ body: (WorkerService) async throws -> Void
    ) async throws -> (Double, Int) {
        let worker = try WorkerService(configuration: configuration, store: store, sender: NullSender(), logger: logger)
        let started = ContinuousClock.now
        let running = Task { try await worker.run() }
        do {
            try await body(worker)
        } catch {
            worker.stop()
            _ = await running.result
            throw error
        }
        let elapsed = ContinuousClock.now - started
        let delivered = worker.statistics.delivered
        worker.stop()
        _ = await running.result
        return (elapsed.seconds, delivered)
    }

    private func wait(until condition: () -> Bool, what: String) async throws {
        let deadline = ContinuousClock.now + .seconds(1_800)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ValidationError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Deletes the run's queues and devices. The journal rows stay, as in production, so that
    /// runs in a row measure a growing journal.
    private func cleanUp(amqp: AMQPConnection, queues: [String], store: Store, workload: BenchWorkload) async throws {
        for queue in queues { _ = try? await amqp.deleteQueue(queue) }
        try? await amqp.deleteExchange("herald.bench.\(workload.runID).dlx")
        try? await amqp.deleteExchange("herald.bench.\(workload.runID).latency.dlx")
        let client = try PostgresClient(configuration: store.configuration.database)
        do {
            try await client.execute("DELETE FROM devices WHERE device_id LIKE $1", ["bench-\(workload.runID)-%"])
        } catch {
            await client.close()
            throw error
        }
        await client.close()
    }

    /// The database's `synchronous_commit` (durability of the journal writes), for the record.
    static func synchronousCommit(_ configuration: StoreConfiguration) async -> String? {
        guard let client = try? PostgresClient(configuration: configuration.database) else { return nil }
        let value = try? await client.query("SHOW synchronous_commit", []).first?.decode(String.self, at: 0)
        await client.close()
        return value
    }

    /// Peak resident set size of this process (`VmHWM` in /proc/self/status), in megabytes.
    static func peakRSSMegabytes() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first
            return kilobytes.map { $0 / 1024 }
        }
        return nil
    }
}
