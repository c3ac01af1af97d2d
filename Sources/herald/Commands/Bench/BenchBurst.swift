import Foundation
import HeraldAMQP
import HeraldCore
import HeraldStore
import HeraldWorker

extension BenchRunner {
    /// `herald bench --burst`: a worker with the real APNs/FCM senders against a `herald sandbox`
    /// child answering after the shape's delay; the busy users' bursts are published, then the
    /// quiet users' pushes; once every message is settled and the backlog is empty, the
    /// journal and the sandbox's record say when each push went out, in which order, and
    /// whether every one went out once (``BurstJournal``, ``BurstOrder``). `publishFirst`: every
    /// push is in the broker before the worker starts, so that the bursts are parked all at once
    /// (a million parked deliveries: `--busy-users 1000 --busy-pushes 1000 --quiet-users 0`).
    func burst(_ workload: BurstWorkload, lanes: Int, publishFirst: Bool = false) async throws -> BenchResult.Burst {
        let shape = workload.shape
        progress("burst: seeding \(shape.busyUsers + shape.quietUsers) devices")
        let registrations = workload.registrations
        for start in stride(from: 0, to: registrations.count, by: 20_000) {
            try await store.devices.importDevices(Array(registrations[start..<min(registrations.count, start + 20_000)]))
        }
        progress("burst: herald sandbox answering after \(shape.delay)")
        let sandbox = try await BenchSandbox(responseDelay: shape.delay)
        defer { sandbox.stop() }
        let configuration = try await topology("burst", lanes: lanes)
        var result = BenchResult.Burst(
            shape: shape, lanes: lanes, prefetch: Int(configuration.prefetch), backlog: configuration.backlog, backlogAfter: configuration.backlogAfter)
        var busyFirstPublished = [Date](repeating: .distantFuture, count: shape.busyUsers)
        var quietPublished = [Date](repeating: .distantFuture, count: shape.quietUsers)
        let started = Date()
        Self.resetPeakRSS()
        func publish() async throws {
            progress("burst: publishing \(shape.busyDeliveries) busy pushes, then \(shape.quietUsers) quiet ones")
            // Small batches: each push's publish time is taken just before its batch.
            for start in stride(from: 0, to: shape.busyDeliveries, by: 500) {
                if Task.isCancelled { throw CancellationError() }
                let events = (start..<min(shape.busyDeliveries, start + 500)).map(workload.busyEvent)
                let now = Date()
                for event in events where event.k == 0 {
                    if case .busy(let b) = event.user { busyFirstPublished[b] = now }
                }
                try await amqp.publishBatch(events.map { message(workload, $0.user, $0.k, configuration.topology) })
            }
            for start in stride(from: 0, to: shape.quietUsers, by: 25) {
                let users = start..<min(shape.quietUsers, start + 25)
                let now = Date()
                for q in users { quietPublished[q] = now }
                try await amqp.publishBatch(users.map { message(workload, .quiet($0), 0, configuration.topology) })
            }
        }
        if publishFirst { try await publish() }
        let (_, delivered, statistics) = try await drain(configuration, sender: try sandbox.providerSender(logger: logger)) { worker in
            if !publishFirst { try await publish() }
            progress("burst: waiting for \(shape.deliveries) messages to be settled")
            try await Self.wait(until: shape.deliveries, of: { Self.settled(worker) }, what: "the burst's messages")
            progress("burst: waiting for the backlog to drain")
        }
        result.peakRSSMegabytes = Self.peakRSSMegabytes()
        result.deliveries = delivered

        progress("burst: checking the journal and the sandbox's record")
        sandbox.terminate()
        var order = BurstOrder(workload: workload)
        try order.read(recordAt: sandbox.recordPath)
        result.accepted = order.devices.reduce(0) { $0 + $1.received } + order.unknown
        let journal = try await BurstJournal.read(workload, client: probe.client)
        result.differences =
            order.differences(workload)
            + BurstJournal.differences(
                journal, workload: workload, workerSent: delivered, deadLetters: statistics.deadLettered, failed: statistics.failed + statistics.tokenDead)

        let lastSent = journal.values.compactMap(\.lastRecorded).max() ?? started
        result.seconds = lastSent.timeIntervalSince(started)
        result.judgeQuiet(
            (0..<shape.quietUsers).compactMap { q in
                journal[workload.deviceId(.quiet(q))]?.lastRecorded.map { $0.timeIntervalSince(quietPublished[q]) * 1000 }
            })
        result.judgeBusy(
            (0..<shape.busyUsers).compactMap { b in
                journal[workload.deviceId(.busy(b))]?.lastRecorded.map { (workload.userId(.busy(b)), $0.timeIntervalSince(busyFirstPublished[b])) }
            })
        return result
    }

    private func message(_ workload: BurstWorkload, _ user: BurstWorkload.User, _ k: Int, _ topology: HeraldTopology) -> AMQPOutgoingMessage {
        AMQPOutgoingMessage(
            exchange: topology.exchange, routingKey: topology.routingKey, body: workload.body(user, k),
            properties: AMQPProperties(contentType: "application/xml", deliveryMode: .persistent, messageID: workload.messageId(user, k)))
    }
}
