import ArgumentParser
import Foundation
import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldPostgres
import HeraldStore
import HeraldWorker
import Logging
import Synchronization

/// The phases of `herald bench`, each in queues of its own (`herald.bench.<run>.<phase>`),
/// deleted at the end with the run's devices.
final class BenchRunner: Sendable {
    let amqp: AMQPConnection
    let store: Store
    let probe: BenchProbe
    let workload: BenchWorkload
    let base: WorkerConfiguration
    let logger: Logger
    let quiet: Bool
    private let queues = QueueList()

    init(amqp: AMQPConnection, store: Store, probe: BenchProbe, workload: BenchWorkload, base: WorkerConfiguration, logger: Logger, quiet: Bool) {
        self.amqp = amqp
        self.store = store
        self.probe = probe
        self.workload = workload
        self.base = base
        self.logger = logger
        self.quiet = quiet
    }

    func progress(_ text: String) {
        if !quiet { Console.error("bench: \(text)…") }
    }

    // MARK: Phases

    /// Seconds a consumer that only acknowledges takes to take `events` messages (one round;
    /// the queue stays for the next).
    func bare(events: Int, prefetch: Int) async throws -> BenchResult.Bare {
        let queue = "\(base.topology.queue).bare"
        if !queues.all.queues.contains(queue) { queues.add(queue) }
        try await amqp.declareQueue(AMQPQueue(name: queue, type: base.topology.queueType))
        progress("publishing \(events) events for the bare consumer")
        try await publish(count: events, exchange: "", routingKey: queue, salt: 1)
        progress("bare consumer")
        let connection = try await AMQPConnection.connect(base.amqp, logger: logger)
        let started = ContinuousClock.now
        let consumer = try await connection.consume(queue: queue, prefetch: UInt16(prefetch))
        var received = 0
        for try await delivery in consumer {
            try consumer.ack(delivery.deliveryTag)
            received += 1
            if received == events { break }
        }
        let seconds = (ContinuousClock.now - started).seconds
        try? await consumer.cancel()
        await connection.close()
        return BenchResult.Bare(seconds: seconds, rate: Double(events) / seconds)
    }

    /// `events` of the workload published (with `spread`, the broadcasts taking turns on the
    /// groups), then drained by a worker with `sender`: rates and costs per delivery.
    func pipeline(
        _ name: String, events: Int, lanes: Int, sender: any PushSender, sandbox: BenchSandbox? = nil, spread: Bool = false
    ) async throws -> BenchResult.Run {
        let configuration = try await topology(name, lanes: lanes)
        let runSalt = salt(name)
        let expected = workload.expectedDeliveries(count: events, salt: runSalt, spread: spread)
        progress("\(name): publishing \(events) events")
        try await publish(
            count: events, exchange: configuration.topology.exchange, routingKey: configuration.topology.routingKey, salt: runSalt, spread: spread)
        progress("\(name): draining")
        let before = await probe.read(settleStatistics: true)
        let sandboxBefore = sandbox?.cpuSeconds
        var after = before
        var answers: [BenchResult.Bucket] = []
        let (seconds, delivered, statistics) = try await drain(configuration, sender: sender) { worker in
            try await Self.wait(until: events, of: { Self.settled(worker) }, what: "\(name) to drain")
            // CPU as soon as the last delivery is recorded, before the worker winds down; row
            // counts once its sessions have ended and published them.
            after = await probe.read()
            answers = Self.buckets(worker.providerAnswerDistribution)
        }
        after.rowWrites = await probe.read(settleStatistics: true).rowWrites
        var run = BenchResult.Run(
            events: events, deliveries: delivered, seconds: seconds, eventRate: Double(events) / seconds, deliveryRate: Double(delivered) / seconds,
            costs: BenchProbe.costs(from: before, to: after, deliveries: delivered)
        )
        if let sandboxBefore, let sandboxAfter = sandbox?.cpuSeconds, delivered > 0 {
            run.sandboxCPUMicroseconds = (sandboxAfter - sandboxBefore) / Double(delivered) * 1e6
        }
        run.failed = statistics.failed + statistics.tokenDead
        run.queued = statistics.queued
        run.deadLetters = statistics.deadLettered
        progress("\(name): checking the journal")
        let check = BenchCheck.compare(
            expected: expected, journaled: try await BenchCheck.journal(of: Array(expected.keys), client: probe.client),
            deadLetters: statistics.deadLettered, workerSent: delivered)
        run.expectedDeliveries = check.expectedDeliveries
        run.journaledDeliveries = check.journaledDeliveries
        run.differences = check.differences
        run.answerP50Milliseconds = Self.percentile(0.50, of: answers)
        run.answerP99Milliseconds = Self.percentile(0.99, of: answers)
        let answered = answers.reduce(0) { $0 + $1.count }
        if answered > 0 {
            run.answerMeanMilliseconds = answers.reduce(0) { $0 + $1.upToMilliseconds * Double($1.count) } / Double(answered)
        }
        return run
    }

    /// Events published at `rate` per second while a worker consumes: publish→sent latency. A
    /// warm-up of a second or two at the same rate comes first (caches, connections), and does
    /// not count.
    func latency(events: Int, rate: Int) async throws -> BenchResult.Latency {
        let configuration = try await topology("latency\(rate)", lanes: base.lanes)
        var result = BenchResult.Latency(rate: rate, events: events)
        let warmUp = min(max(rate, 500), 5_000)
        _ = try await drain(configuration, sender: NullSender()) { worker in
            try await publishSteadily(count: warmUp, rate: rate, topology: configuration.topology)
            try await Self.wait(until: warmUp, of: { Self.settled(worker) }, what: "the latency warm-up")
            let before = worker.latencyDistribution
            try await publishSteadily(count: events, rate: rate, topology: configuration.topology)
            try await Self.wait(until: warmUp + events, of: { Self.settled(worker) }, what: "the latency run")
            let histogram = Self.difference(worker.latencyDistribution, before)
            result.histogram = histogram
            result.p50Milliseconds = Self.percentile(0.50, of: histogram)
            result.p99Milliseconds = Self.percentile(0.99, of: histogram)
        }
        return result
    }

    /// A whole distribution as the result's buckets (empty ones left out).
    static func buckets(_ distribution: [(upTo: Duration, count: Int)]) -> [BenchResult.Bucket] {
        difference(distribution, [])
    }

    /// The buckets of `after` less those of `before` (both cumulative since the worker started).
    static func difference(_ after: [(upTo: Duration, count: Int)], _ before: [(upTo: Duration, count: Int)]) -> [BenchResult.Bucket] {
        var earlier: [Duration: Int] = [:]
        for bucket in before { earlier[bucket.upTo] = bucket.count }
        return after.compactMap { bucket in
            let count = bucket.count - (earlier[bucket.upTo] ?? 0)
            return count > 0 ? BenchResult.Bucket(upToMilliseconds: bucket.upTo.seconds * 1000, count: count) : nil
        }
    }

    /// The upper edge of the bucket holding the `fraction` rank.
    static func percentile(_ fraction: Double, of histogram: [BenchResult.Bucket]) -> Double? {
        let total = histogram.reduce(0) { $0 + $1.count }
        guard total > 0 else { return nil }
        let rank = max(1, Int((Double(total) * fraction).rounded(.up)))
        var seen = 0
        for bucket in histogram {
            seen += bucket.count
            if seen >= rank { return bucket.upToMilliseconds }
        }
        return histogram.last?.upToMilliseconds
    }

    /// Registers `count` extra devices in the branch that ``broadcast(devices:sender:label:sandbox:)``
    /// addresses.
    func seedBroadcastDevices(_ count: Int) async throws {
        progress("seeding \(count) devices for the broadcast")
        let run = workload.runID, zone = workload.zone, branch = workload.broadcastBranch
        // A batch at a time: the bench is the worker too, and ten million registrations held
        // at once would be its peak RSS.
        for start in stride(from: 0, to: count, by: 20_000) {
            let registrations = (start..<min(count, start + 20_000)).map { (n: Int) -> DeviceRegistration in
                let ios = n % 2 == 0
                let token: String = ios ? String(format: "%064x", 1_000_000_000 + n) : "bench-\(run)-bfcm-\(n)"
                return DeviceRegistration(
                    deviceId: "bench-\(run)-bd\(n)", platform: ios ? .ios : .android, token: token, culture: "ru-RU",
                    userId: "bench-\(run)-bu\(n)", zoneId: zone, branchId: branch
                )
            }
            try await store.devices.importDevices(registrations)
            if start % 1_000_000 == 0, start > 0 { progress("seeded \(start) devices") }
        }
    }

    /// One broadcast event to the `devices` devices of the broadcast branch: seconds from its
    /// publication until it is acknowledged, that is until every delivery is recorded.
    func broadcast(devices: Int, sender: any PushSender, lanes: Int, label: String, sandbox: BenchSandbox?) async throws -> BenchResult.Broadcast {
        let configuration = try await topology("broadcast\(sandbox == nil ? "-null" : "-providers")", lanes: lanes)
        let sandboxBefore = sandbox?.cpuSeconds
        var result = BenchResult.Broadcast(label: label, devices: devices)
        let before = await probe.read()
        Self.resetPeakRSS()
        let key = MessageKey(text: "bench-\(workload.runID)-broadcast-\(UInt32.random(in: 0...UInt32.max))")
        let (_, delivered, statistics) = try await drain(configuration, sender: sender) { worker in
            let published = ContinuousClock.now
            try await amqp.publish(
                AMQPOutgoingMessage(
                    exchange: configuration.topology.exchange, routingKey: configuration.topology.routingKey,
                    body: workload.broadcastBody(salt: Int.random(in: 0..<1_000_000)),
                    properties: AMQPProperties(contentType: "application/xml", deliveryMode: .persistent, messageID: key.text)
                ))
            try await Self.wait(until: { worker.statistics.acked >= 1 }, what: "the broadcast")
            // Sent in windows (more subscriptions than worker.broadcast_memory): acknowledged once
            // written down, done once every window's deliveries are recorded. Meanwhile other
            // users' events come at a steady 200 a second: their publish→sent latency (a
            // broadcast in windows is not in the latency histogram).
            let before = worker.latencyDistribution
            var others = 0
            let deadline = ContinuousClock.now + .seconds(3_600)
            while let found = try await store.broadcasts.find(key), !found.done {
                guard ContinuousClock.now < deadline else { throw BenchError("timed out waiting for the broadcast's windows") }
                try await publishSteadily(count: 50, rate: 200, topology: configuration.topology, targetedOnly: true)
                others += 50
            }
            result.seconds = (ContinuousClock.now - published).seconds
            try await Self.wait(until: 1 + others, of: { Self.settled(worker) }, what: "the other users' events")
            let histogram = Self.difference(worker.latencyDistribution, before)
            result.otherEvents = others
            result.otherP99Milliseconds = Self.percentile(0.99, of: histogram)
        }
        result.deliveries = delivered
        result.deferred = statistics.deferred
        if let found = try await store.broadcasts.find(key), let progress = try await store.broadcasts.progress(ofMessage: found.messageId) {
            // Every device of the broadcast branch selected, and every delivery terminal.
            result.windowed = progress
            guard progress.done, progress.selected == devices, progress.sent + progress.failed == progress.selected, progress.waiting == 0 else {
                throw BenchError(
                    "the broadcast to \(devices) devices selected \(progress.selected), sent \(progress.sent), failed \(progress.failed), "
                        + "left \(progress.waiting) waiting (done: \(progress.done))")
            }
        }
        result.peakRSSMegabytes = Self.peakRSSMegabytes()
        result.workerCPUMicroseconds = BenchProbe.costs(from: before, to: await probe.read(), deliveries: delivered).workerCPUMicroseconds
        if let sandboxBefore, let after = sandbox?.cpuSeconds, delivered > 0 {
            result.sandboxCPUMicroseconds = (after - sandboxBefore) / Double(delivered) * 1e6
        }
        return result
    }

    /// `messages` published first, then a worker consumes them for at most two minutes: its
    /// peak RSS (the backlog stays in the broker; at most the prefetch is in the process).
    func backlog(messages: Int) async throws -> BenchResult.Backlog {
        let configuration = try await topology("backlog", lanes: base.lanes)
        progress("backlog: publishing \(messages) messages")
        try await publish(count: messages, exchange: configuration.topology.exchange, routingKey: configuration.topology.routingKey, salt: 9)
        Self.resetPeakRSS()
        progress("backlog: consuming")
        var result = BenchResult.Backlog(messages: messages)
        let started = ContinuousClock.now
        _ = try await drain(configuration, sender: NullSender()) { worker in
            while worker.statistics.acked < messages, ContinuousClock.now - started < .seconds(120) {
                try await Task.sleep(for: .milliseconds(200))
            }
            result.consumed = worker.statistics.acked
        }
        result.seconds = (ContinuousClock.now - started).seconds
        result.peakRSSMegabytes = Self.peakRSSMegabytes()
        return result
    }

    // MARK: Support

    /// A worker configuration with queues of its own (declared by the worker).
    func topology(_ name: String, lanes: Int) async throws -> WorkerConfiguration {
        var configuration = base
        // An exchange of its own too: the phase deletes what it declared, and the default
        // exchange (`herald`) may be another installation's on a shared broker.
        let queue = "\(base.topology.queue).\(name)"
        configuration.topology = HeraldTopology(exchange: queue + ".x", queue: queue, queueType: base.topology.queueType)
        configuration.lanes = lanes
        // One process, no partitions: the bench's counts (one acknowledgement per event) and its
        // check (one journal key per message) assume none.
        configuration.partitions = 0
        queues.add(
            configuration.topology.queue, configuration.topology.deadLetterQueue, exchanges: configuration.topology.exchange,
            configuration.topology.deadLetterExchange)
        try await amqp.declare(configuration.topology)
        return configuration
    }

    /// Queues a phase's worker declared itself (partition queues): deleted with the others.
    func deleteAtTheEnd(_ names: [String]) {
        for name in names { queues.add(name) }
    }

    func salt(_ name: String) -> Int { Int(UInt32(truncatingIfNeeded: name.hashValue)) }

    func publish(count: Int, exchange: String, routingKey: String, salt: Int, spread: Bool = false) async throws {
        let properties = AMQPProperties(contentType: "application/xml", deliveryMode: .persistent)
        for start in stride(from: 0, to: count, by: 5_000) {
            // Not `Task.checkCancellation()`: with it, Swift 6.3.1's release build crashes
            // (signal 11) splitting `pipeline`'s coroutine, into which this is inlined.
            if Task.isCancelled { throw CancellationError() }
            let batch = (start..<min(count, start + 5_000)).map {
                AMQPOutgoingMessage(exchange: exchange, routingKey: routingKey, body: workload.body($0, salt: salt, spread: spread), properties: properties)
            }
            try await amqp.publishBatch(batch)
        }
    }

    /// Publishes `count` events at `rate` per second, each stamped with its publish time
    /// (`timestamp_in_ms`).
    /// `targetedOnly`: none of the workload's broadcasts (beside a large broadcast's devices,
    /// each would be sent in windows over all of them).
    private func publishSteadily(count: Int, rate: Int, topology: HeraldTopology, targetedOnly: Bool = false) async throws {
        let started = ContinuousClock.now
        let perTick = max(1, rate / 100)  // 100 batches per second
        var sent = 0
        let salt = Int.random(in: 0..<1_000_000)
        let indexes = targetedOnly ? Array((0..<count * 2).lazy.filter { self.workload.kind($0) != .broadcast }.prefix(count)) : Array(0..<count)
        while sent < count {
            let batch = indexes[sent..<min(count, sent + perTick)].map { index in
                let properties = AMQPProperties(
                    contentType: "application/xml", headers: ["timestamp_in_ms": .int(Int64((Date().timeIntervalSince1970 * 1000).rounded()))],
                    deliveryMode: .persistent
                )
                return AMQPOutgoingMessage(
                    exchange: topology.exchange, routingKey: topology.routingKey, body: workload.body(index, salt: salt), properties: properties)
            }
            try await amqp.publishBatch(batch)
            sent += batch.count
            let due = started + .seconds(Double(sent) / Double(rate))
            if due > ContinuousClock.now { try await Task.sleep(until: due, clock: .continuous) }
        }
    }

    /// Runs a worker, as a process does (a store of its own, closed at the end so that its
    /// database sessions end and publish their statistics), while `body` runs once it consumes;
    /// returns the seconds from its start, the deliveries made and its final statistics.
    func drain(
        _ configuration: WorkerConfiguration, sender: any PushSender, _ body: (WorkerService) async throws -> Void
    ) async throws -> (Double, Int, WorkerStatistics) {
        let store = try Store(configuration: self.store.configuration, logger: logger)
        let worker = try WorkerService(configuration: configuration, store: store, sender: sender, logger: logger)
        let started = ContinuousClock.now
        let running = Task { try await worker.run() }
        do {
            try await Self.wait(until: { worker.isConsuming }, what: "the worker to consume")
            try await body(worker)
            // Acknowledged is not yet sent for deliveries queued in a busy user's backlog.
            let deadline = ContinuousClock.now + .seconds(1_800)
            while try await store.backlog.count() > 0 {
                guard ContinuousClock.now < deadline else { throw BenchError("timed out waiting for the backlog to drain") }
                try await Task.sleep(for: .milliseconds(20))
            }
        } catch {
            worker.stop()
            _ = await running.result
            await store.close()
            throw error
        }
        let elapsed = (ContinuousClock.now - started).seconds
        let statistics = worker.statistics
        worker.stop()
        _ = await running.result
        await store.close()
        return (elapsed, statistics.delivered, statistics)
    }

    /// Messages the worker is done with. A dead-lettered message is acknowledged once its dead
    /// letter is recorded, so it counts among the acknowledged ones (adding the dead letters
    /// again ended a drain that many messages early).
    static func settled(_ worker: WorkerService) -> Int { worker.statistics.acked }

    /// Waits until `done()` reaches `target`: every 5 ms near the end, less often before (a
    /// quarter of the time the rate so far says is left, at most 50 ms). Each check costs the
    /// process a timer and a pool thread's wake-up, and the bench counts this process's CPU as
    /// the worker's: a drain's timers went from ~330 to ~85 a second.
    static func wait(until target: Int, of done: () -> Int, what: String) async throws {
        let started = ContinuousClock.now
        let deadline = started + .seconds(1_800)
        while true {
            let count = done()
            if count >= target { return }
            let now = ContinuousClock.now
            guard now < deadline else { throw BenchError("timed out waiting for \(what)") }
            var pause = Duration.milliseconds(5)
            if count > 0 {
                let left = (now - started) * (Double(target - count) / Double(count))
                pause = min(max(left / 4, pause), .milliseconds(50))
            }
            try await Task.sleep(for: pause)
        }
    }

    /// Waits until `condition` holds, checking every 5 ms (a count of one that is not there yet).
    static func wait(until condition: () -> Bool, what: String) async throws {
        try await wait(until: 1, of: { condition() ? 1 : 0 }, what: what)
    }

    /// Deletes the run's queues and devices. The journal rows stay, as in production, so that
    /// runs in a row measure a growing journal.
    func cleanUp() async throws {
        let (queueNames, exchanges) = queues.all
        for queue in queueNames { _ = try? await amqp.deleteQueue(queue) }
        for exchange in exchanges { try? await amqp.deleteExchange(exchange) }
        try await probe.client.execute("DELETE FROM devices WHERE device_id LIKE $1", ["bench-\(workload.runID)-%"])
    }

    func close() async {
        await amqp.close()
        await store.close()
        await probe.client.close()
    }

    /// Peak resident set size of this process (`VmHWM` in /proc/self/status), in megabytes.
    static func peakRSSMegabytes() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return line.split(separator: " ").compactMap { Double($0) }.first.map { $0 / 1024 }
        }
        return nil
    }

    /// Resets `VmHWM` to the current RSS (Linux: `5` to /proc/self/clear_refs), so that a phase's
    /// peak is its own.
    static func resetPeakRSS() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}

/// The queues and exchanges a run declared.
private final class QueueList: Sendable {
    private let state = Mutex<(queues: [String], exchanges: [String])>(([], []))

    func add(_ queues: String..., exchanges: String...) {
        state.withLock {
            $0.queues += queues
            $0.exchanges += exchanges
        }
    }

    var all: (queues: [String], exchanges: [String]) { state.withLock { $0 } }
}
