import Foundation
import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Partitioned ingest (`worker.partitions` = 4) with two worker pipelines on one queue: per-user
/// order across processes, every delivery key exactly once, ownership of the ingest and of the
/// partitions moving when a worker stops or dies, broadcasts reaching each device once, and bad
/// messages dead-lettered once.
@Suite("Partitions", .timeLimit(.minutes(3)))
struct PartitionTests {
    static let partitions = 4

    /// Two workers started together on 2,000 events for 100 users, interleaved: each owns its
    /// share (two partitions), one ingests.
    @Test func twoWorkersKeepEachUsersOrderAndDeliverEveryKeyOnce() async throws {
        try await Self.withPartitionedFixture { fixture in
            let (users, events) = (100, 2_000)
            try await fixture.store.devices.importDevices(
                (0..<users).map {
                    TestEvents.device("d\($0)", user: "u\($0)", platform: $0 % 2 == 0 ? .ios : .android)
                })
            let sender = RecordingSender()
            let owners = (0..<events).map { _ in Int.random(in: 0..<users) }
            let (first, second) = try Self.workers(fixture, sender: sender)
            try await Self.running([first, second]) {
                try await waitUntil("both workers consume", timeout: .seconds(20)) { first.isConsuming && second.isConsuming }
                try await waitUntil("one worker holds the ingest", timeout: .seconds(20)) { first.isIngesting || second.isIngesting }
                #expect(!(first.isIngesting && second.isIngesting), "one ingest at a time")
                try await waitUntil("each owns two partitions", timeout: .seconds(20)) {
                    first.ownedPartitions.count == 2 && second.ownedPartitions.count == 2
                }
                #expect(first.ownedPartitions.isDisjoint(with: second.ownedPartitions))
                try await fixture.publish(
                    owners.enumerated().map { index, user in
                        TestEvents.xml(users: ["u\(user)"], parameters: ["\(index)", "RUB"], sequence: index)
                    })
                try await waitUntil("\(events) deliveries", timeout: .seconds(90)) { sender.count >= events }
                try await fixture.waitUntilSettled(first, second, queues: Self.queues(fixture))
            }
            try Self.expectOrderedExactlyOnce(sender.sent, events: events, users: Set(owners).count)
            let (a, b) = (first.statistics, second.statistics)
            #expect(a.ingested + b.ingested == events, "every event ingested once: \(a.ingested) + \(b.ingested)")
            #expect(a.consumed + b.consumed == events, "one copy per event (one user each)")
            #expect(a.consumed > 0 && b.consumed > 0, "both workers carried partitions: \(a.consumed) and \(b.consumed) copies")
        }
    }

    /// The worker holding the ingest is killed (its connections dropped, then its task cancelled:
    /// nothing more is settled) in the middle of the run: the other takes over the ingest and its
    /// partitions; every key at least once, none twice, each user's order kept.
    @Test func killingTheIngestHolderMidRunHandsEverythingToTheOther() async throws {
        try await Self.withPartitionedFixture { fixture in
            let (users, events) = (100, 2_000)
            try await fixture.store.devices.importDevices(
                (0..<users).map {
                    TestEvents.device("d\($0)", user: "u\($0)", platform: $0 % 2 == 0 ? .ios : .android)
                })
            // A slow provider, so that the kill finds deliveries in flight.
            let sender = RecordingSender(delay: .milliseconds(2))
            // The first worker reaches the broker through a proxy, so that its death can drop its
            // TCP connections the way kill -9 does.
            let proxy = try await TCPProxy.start(targetHost: "127.0.0.1", targetPort: fixture.amqpConfiguration.port)
            let (_, second) = try Self.workers(fixture, sender: sender)
            var firstConfiguration = second.configuration
            firstConfiguration.amqp.port = proxy.port
            let first = try WorkerService(configuration: firstConfiguration, store: fixture.store, sender: sender.source("first"), logger: fixture.logger)
            let firstTask = Task { try await first.run() }
            try await waitUntil("the first worker ingests", timeout: .seconds(20)) { first.isIngesting && first.isConsuming }
            let secondTask = Task { try await second.run() }
            do {
                // Balanced before the load, so that no handover meets the held provider.
                try await waitUntil("the second worker takes its share", timeout: .seconds(20)) {
                    second.ownedPartitions.count == 2 && first.ownedPartitions.count == 2
                }
                #expect(!second.isIngesting)
                // The provider stops answering after a few hundred, so that the kill finds the
                // rest in flight or unsent however fast the workers are.
                sender.hold(at: 300)
                try await fixture.publish((0..<events).map { TestEvents.xml(users: ["u\($0 % users)"], parameters: ["\($0)"], sequence: $0) })
                try await waitUntil("a few hundred deliveries", timeout: .seconds(60)) { sender.count >= 300 }
                // The process dies: from this instant nothing it sends arrives, its connections
                // drop (the broker requeues what it held and hands its queues over in one step),
                // and it is gone (cancelling it now can no longer reach the broker).
                sender.close(source: "first")
                try await proxy.shutdown()
                firstTask.cancel()
                try await WorkerFixture.join(firstTask)
                let atKill = sender.count
                #expect(atKill < events, "killed mid-run")
                sender.release()
                try await waitUntil("the second worker takes the ingest", timeout: .seconds(20)) { second.isIngesting }
                try await waitUntil("every delivery", timeout: .seconds(90)) { Set(sender.sent.map(\.key)).count >= events }
                try await fixture.waitUntilSettled(second, queues: Self.queues(fixture))
                #expect(second.statistics.consumed > 0, "the second worker delivered partitions the first owned")
                second.stop()
                try await WorkerFixture.join(secondTask)
            } catch {
                sender.release()
                try? await proxy.shutdown()
                firstTask.cancel()
                second.stop()
                try? await WorkerFixture.join(firstTask)
                try? await WorkerFixture.join(secondTask)
                throw error
            }
            try Self.expectOrderedExactlyOnce(sender.sent, events: events, users: users)
            #expect(try await fixture.depth(fixture.topology.deadLetterQueue) == 0)
        }
    }

    /// A graceful stop of the worker holding the ingest moves it and its partitions to the other,
    /// with order and exactly-once kept.
    @Test func aGracefulStopHandsTheIngestAndPartitionsOver() async throws {
        try await Self.withPartitionedFixture { fixture in
            let (users, events) = (50, 600)
            try await fixture.store.devices.importDevices((0..<users).map { TestEvents.device("d\($0)", user: "u\($0)") })
            let sender = RecordingSender(delay: .milliseconds(2))
            let (first, second) = try Self.workers(fixture, sender: sender)
            let firstTask = Task { try await first.run() }
            try await waitUntil("the first worker ingests", timeout: .seconds(20)) { first.isIngesting && first.isConsuming }
            let secondTask = Task { try await second.run() }
            do {
                // Balanced before the load, so that no handover meets the held provider.
                try await waitUntil("the second worker takes its share", timeout: .seconds(20)) {
                    second.ownedPartitions.count == 2 && first.ownedPartitions.count == 2
                }
                try await fixture.publish((0..<events).map { TestEvents.xml(users: ["u\($0 % users)"], parameters: ["\($0)"], sequence: $0) })
                try await waitUntil("some deliveries", timeout: .seconds(60)) { sender.count >= 100 }
                first.stop()
                try await WorkerFixture.join(firstTask)
                try await waitUntil("the second worker takes the ingest", timeout: .seconds(20)) { second.isIngesting }
                try await waitUntil("every delivery", timeout: .seconds(60)) { sender.count >= events }
                try await fixture.waitUntilSettled(second, queues: Self.queues(fixture))
                #expect(first.statistics.consumed > 0 && second.statistics.consumed > 0, "both carried partitions")
                second.stop()
                try await WorkerFixture.join(secondTask)
            } catch {
                first.stop()
                second.stop()
                try? await WorkerFixture.join(firstTask)
                try? await WorkerFixture.join(secondTask)
                throw error
            }
            try Self.expectOrderedExactlyOnce(sender.sent, events: events, users: users)
        }
    }

    /// A broadcast (News, UserId 0, zone filter) reaches every matching device exactly once,
    /// although it is copied to every partition and one device is subscribed for users of
    /// different partitions; an undecodable message is dead-lettered once, by the ingest.
    @Test func aBroadcastReachesEveryMatchingDeviceOnceAndBadMessagesAreDeadLetteredOnce() async throws {
        try await Self.withPartitionedFixture { fixture in
            var devices = (0..<40).map { TestEvents.device("d\($0)", user: "u\($0)", zone: $0 % 4 == 3 ? "other" : "w1") }
            // One device, three users in three partitions (u1 → 3, u2 → 2, u3 → 1).
            devices += ["u1", "u2", "u3"].map { TestEvents.device("shared", user: $0, zone: "w1") }
            try await fixture.store.devices.importDevices(devices)
            let expected = Set((0..<40).filter { $0 % 4 != 3 }.map { "d\($0)" } + ["shared"])
            let sender = RecordingSender()
            let (first, second) = try Self.workers(fixture, sender: sender)
            try await Self.running([first, second]) {
                try await waitUntil("both workers consume", timeout: .seconds(20)) { first.isConsuming && second.isConsuming }
                let broadcast = Data(
                    """
                    <PushNotification><EventId>TransferIssued</EventId><EventType>News</EventType>\
                    <EventDateTime>2015-04-30T17:32:00.0000001+03:00</EventDateTime><EventFilters>\
                    <Filter name="UserId" value="0" /><Filter name="ZoneId" value="w1" /></EventFilters>\
                    <EventParams><EventParam name="a" value="1" /><EventParam name="b" value="RUB" /></EventParams></PushNotification>
                    """.utf8)
                try await fixture.publish(broadcast, headers: ["AvoidDublication": true])
                try await fixture.publish(Data("<PushNotification><EventId>TransferIssued</EventId>".utf8))
                try await waitUntil("the broadcast and the dead letter", timeout: .seconds(30)) {
                    guard sender.count >= expected.count else { return false }
                    return (try? await fixture.depth(fixture.topology.deadLetterQueue)) == 1
                }
                try await fixture.waitUntilSettled(first, second, queues: Self.queues(fixture))
            }
            let reached = sender.sent.map(\.deviceId)
            #expect(Set(reached) == expected)
            #expect(reached.count == expected.count, "each device once: \(reached.sorted())")
            #expect(sender.sent.allSatisfy { $0.userId == "0" })
            #expect(first.statistics.partitionCopies + second.statistics.partitionCopies == Self.partitions)
            #expect(first.statistics.duplicatesDropped + second.statistics.duplicatesDropped == 0, "AvoidDublication keys name the partition")
            #expect(first.statistics.deadLettered + second.statistics.deadLettered == 1)
            let letters = try await DeadLetterQueue(connection: fixture.amqp, topology: fixture.topology, store: fixture.store).list(limit: 10)
            #expect(letters.map(\.code) == ["undecodable"])
        }
    }

    /// `herald drain --partitions 4` alone: the main queue and every partition queue emptied,
    /// everything delivered, exit 0.
    @Test func drainWithPartitionsEmptiesTheMainAndEveryPartitionQueue() async throws {
        try await Self.withPartitionedFixture { fixture in
            try await fixture.store.devices.importDevices((0..<20).map { TestEvents.device("d\($0)", user: "u\($0)") })
            try await fixture.publish((0..<200).map { TestEvents.xml(users: ["u\($0 % 20)"], parameters: ["\($0)"], sequence: $0) })
            let result = try HeraldCLI.run(
                ["drain", "--timeout", "60s", "--sender", "null", "--partitions", "\(Self.partitions)"],
                environment: WorkerProcessEnvironment.make(fixture), timeout: .seconds(90)
            )
            #expect(result.status == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
            #expect(result.stdout.contains("Drain complete"))
            #expect(result.stdout.contains("consumed 200, delivered 200"), "one copy per single-user event: \(result.stdout)")
            for queue in Self.queues(fixture) {
                #expect(try await fixture.depth(queue) == 0, "\(queue) is empty")
            }
        }
    }

    // MARK: Helpers

    /// A worker fixture whose partition queues are deleted afterwards.
    /// A partition queue beyond the worker's K exists (a process with a larger K made it): the
    /// worker does not ingest, so users are never split between two layouts; once the extra
    /// queue is gone it ingests and delivers.
    @Test func aPartitionQueueBeyondTheWorkersCountStopsTheIngest() async throws {
        try await Self.withPartitionedFixture { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1")])
            let beyond = PartitionLayout(topology: fixture.topology, count: Self.partitions).queueName(Self.partitions)
            try await fixture.amqp.declareQueue(AMQPQueue(name: beyond))
            let sender = RecordingSender()
            let (worker, _) = try Self.workers(fixture, sender: sender)
            try await Self.running([worker]) {
                try await waitUntil("the worker consumes its partitions", timeout: .seconds(20)) { worker.isConsuming }
                try await fixture.publish(TestEvents.xml(users: ["u1"], sequence: 1))
                try await Task.sleep(for: .seconds(1))
                #expect(!worker.isIngesting)
                #expect(try await fixture.depth(fixture.topology.queue) == 1, "the event waits in the main queue")
                _ = try await fixture.amqp.deleteQueue(beyond)
                try await waitUntil("the delivery", timeout: .seconds(20)) { sender.count == 1 }
                #expect(worker.isIngesting)
            }
        }
    }

    /// With quorum queues (`amqp.queue_type quorum`, a RabbitMQ cluster) only one worker ingests
    /// too: RabbitMQ accepts a second "exclusive" consumer on a quorum queue, so the exclusive
    /// consumer alone let every worker ingest at once, and copies of one user's messages reached
    /// the partition out of order (found by the fault campaign's cluster run, docs/reliability.md).
    @Test func withQuorumQueuesOneWorkerIngestsAndOrderHolds() async throws {
        try await Self.withPartitionedFixture(queueType: .quorum) { fixture in
            let (users, events) = (20, 400)
            try await fixture.store.devices.importDevices(
                (0..<users).map {
                    TestEvents.device("d\($0)", user: "u\($0)", platform: $0 % 2 == 0 ? .ios : .android)
                })
            let sender = RecordingSender()
            let owners = (0..<events).map { _ in Int.random(in: 0..<users) }
            let (first, second) = try Self.workers(fixture, sender: sender)
            try await Self.running([first, second]) {
                try await waitUntil("both workers consume", timeout: .seconds(20)) { first.isConsuming && second.isConsuming }
                try await waitUntil("one worker holds the ingest", timeout: .seconds(20)) { first.isIngesting || second.isIngesting }
                // The other has had several tries (every 300 ms here) by now.
                try await Task.sleep(for: .seconds(2))
                #expect(!(first.isIngesting && second.isIngesting), "one ingest at a time")
                try await fixture.publish(
                    owners.enumerated().map { index, user in
                        TestEvents.xml(users: ["u\(user)"], parameters: ["\(index)", "RUB"], sequence: index)
                    })
                try await waitUntil("\(events) deliveries", timeout: .seconds(90)) { sender.count >= events }
                try await fixture.waitUntilSettled(first, second, queues: Self.queues(fixture))
            }
            try Self.expectOrderedExactlyOnce(sender.sent, events: events, users: Set(owners).count)
            let (a, b) = (first.statistics, second.statistics)
            #expect(a.ingested == 0 || b.ingested == 0, "one worker ingested everything: \(a.ingested) and \(b.ingested)")
        }
    }

    static func withPartitionedFixture(queueType: AMQPQueueType = .classic, _ body: (WorkerFixture) async throws -> Void) async throws {
        try await WorkerFixture.with(queueType: queueType) { fixture in
            let layout = PartitionLayout(topology: fixture.topology, count: partitions)
            do {
                try await body(fixture)
            } catch {
                for queue in layout.queueNames { _ = try? await fixture.amqp.deleteQueue(queue) }
                throw error
            }
            for queue in layout.queueNames { _ = try? await fixture.amqp.deleteQueue(queue) }
        }
    }

    /// Two workers with K partitions sharing `sender` (as `first` and `second`).
    static func workers(_ fixture: WorkerFixture, sender: RecordingSender) throws -> (WorkerService, WorkerService) {
        var configuration = fixture.configuration(lanes: 16)
        configuration.partitions = partitions
        configuration.ingestRetryInterval = .milliseconds(300)
        configuration.partitionBalanceInterval = .milliseconds(300)
        return (
            try WorkerService(configuration: configuration, store: fixture.store, sender: sender.source("first"), logger: fixture.logger),
            try WorkerService(configuration: configuration, store: fixture.store, sender: sender.source("second"), logger: fixture.logger)
        )
    }

    /// Runs `workers` while `body` runs, then stops them gracefully (bounded); returns `body`'s
    /// value.
    @discardableResult
    static func running<T>(_ workers: [WorkerService], _ body: () async throws -> T) async throws -> T {
        let tasks = workers.map { worker in Task { try await worker.run() } }
        let result: T
        do {
            result = try await body()
        } catch {
            for worker in workers { worker.stop() }
            for task in tasks { try? await WorkerFixture.join(task) }
            throw error
        }
        for worker in workers { worker.stop() }
        for task in tasks { try await WorkerFixture.join(task) }
        return result
    }

    /// The main queue and every partition queue.
    static func queues(_ fixture: WorkerFixture) -> [String] {
        [fixture.topology.queue] + PartitionLayout(topology: fixture.topology, count: partitions).queueNames
    }

    /// Every key once, and each user's deliveries in publish order (by the time the one
    /// recording sender accepted them).
    static func expectOrderedExactlyOnce(_ sent: [RecordingSender.Sent], events: Int, users: Int) throws {
        let counts = Dictionary(sent.map { ($0.key, 1) }, uniquingKeysWith: +)
        #expect(counts.count == events, "every delivery key at least once")
        #expect(counts.values.filter { $0 > 1 }.isEmpty, "no delivery key twice (\(sent.count) sent, \(counts.count) keys)")
        var lastByUser: [String: Int] = [:]
        var violations: [String] = []
        for delivery in sent.sorted(by: { $0.time < $1.time }) {
            let sequence = try #require(OrderingTests.sequence(delivery))
            if let last = lastByUser[delivery.userId], last >= sequence { violations.append("\(delivery.userId): \(sequence) after \(last)") }
            lastByUser[delivery.userId] = sequence
        }
        #expect(violations.isEmpty, "deliveries out of publish order: \(violations.prefix(10))")
        #expect(lastByUser.count == users)
    }
}
