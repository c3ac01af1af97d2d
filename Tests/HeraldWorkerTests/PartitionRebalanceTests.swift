import Foundation
import HeraldAMQP
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Synchronization
import Testing

/// Fair-share partition ownership, live (`worker.partitions` = 4): a worker that joins takes its
/// share, one that stops or dies has its partitions taken over, within 10 s and under a steady
/// publish, with every delivery key sent once, each user's order kept, and no partition paused
/// 5 s or more.
@Suite("Partition rebalance", .timeLimit(.minutes(3)))
struct PartitionRebalanceTests {
    static let partitions = PartitionTests.partitions

    /// Two workers own two partitions each; a third joins: within 10 s they own 2, 1 and 1 (then
    /// it stops again).
    @Test func aWorkerThatJoinsTakesItsShareWithinTenSeconds() async throws {
        try await Self.withWorkers { fixture, sender, first, second in
            let third = try Self.worker(fixture, sender: sender, name: "third")
            try await Self.waitForShares([first, second], [2, 2], within: .seconds(20))
            let published = try await Self.whilePublishing(fixture, sender) {
                try await PartitionTests.running([third]) {
                    let joined = ContinuousClock.now
                    try await Self.waitForShares([first, second, third], [1, 1, 2], within: .seconds(10))
                    Self.log("joined: balanced after \(ContinuousClock.now - joined)")
                    try await Task.sleep(for: .seconds(2))
                }
                return (first, second)
            }
            #expect(third.statistics.consumed > 0, "the third worker carried its partition")
            return published
        }
    }

    /// Three workers own 2, 1 and 1; the one owning two stops gracefully: within 10 s the other
    /// two own two each.
    @Test func aWorkerThatStopsHandsItsPartitionsOverWithinTenSeconds() async throws {
        try await Self.withWorkers { fixture, sender, first, second in
            let third = try Self.worker(fixture, sender: sender, name: "third")
            return try await PartitionTests.running([third]) {
                try await Self.waitForShares([first, second, third], [1, 1, 2], within: .seconds(20))
                return try await Self.whilePublishing(fixture, sender) {
                    // The one that owns two, so that both others must take one.
                    let leaving = [first, second, third].first { $0.ownedPartitions.count == 2 } ?? third
                    let staying: [WorkerService] = [first, second, third].filter { $0 !== leaving }
                    let stopped = ContinuousClock.now
                    leaving.stop()
                    try await Self.waitForShares(staying, [2, 2], within: .seconds(10))
                    Self.log("left: balanced after \(ContinuousClock.now - stopped)")
                    return (staying[0], staying[1])
                }
            }
        }
    }

    /// Three workers own 2, 1 and 1; the one owning two dies as with `kill -9`: its broker and
    /// database connections drop at once (both go through proxies) and it sends nothing more.
    /// Within 10 s the other two own two each.
    @Test func aWorkerKilledHasItsPartitionsTakenOverWithinTenSeconds() async throws {
        try await Self.withWorkers(startingThem: false) { fixture, sender, first, second in
            let broker = try await TCPProxy.start(targetHost: "127.0.0.1", targetPort: fixture.amqpConfiguration.port)
            let database = try await TCPProxy.start(targetHost: "127.0.0.1", targetPort: fixture.database.configuration.port)
            var storeConfiguration = fixture.store.configuration
            storeConfiguration.database.host = "127.0.0.1"
            storeConfiguration.database.port = database.port
            let victimStore = try Store(configuration: storeConfiguration, logger: fixture.logger)
            var configuration = first.configuration
            configuration.amqp.port = broker.port
            let victim = try WorkerService(configuration: configuration, store: victimStore, sender: sender.source("victim"), logger: fixture.logger)
            let victimTask = Task { try await victim.run() }
            let published: Int
            do {
                try await waitUntil("the victim owns every partition", timeout: .seconds(20)) { victim.ownedPartitions.count == Self.partitions }
                published = try await PartitionTests.running([first, second]) {
                    try await Self.waitForShares([first, second, victim], [1, 1, 2], within: .seconds(20))
                    // It owned the most when the others joined, so it keeps the remainder.
                    #expect(victim.ownedPartitions.count == 2)
                    return try await Self.whilePublishing(fixture, sender) {
                        let killed = ContinuousClock.now
                        sender.close(source: "victim")
                        try await broker.shutdown()
                        try await database.shutdown()
                        try await Self.waitForShares([first, second], [2, 2], within: .seconds(10))
                        Self.log("killed: balanced after \(ContinuousClock.now - killed)")
                        return (first, second)
                    }
                }
            } catch {
                try? await broker.shutdown()
                try? await database.shutdown()
                victimTask.cancel()
                try? await WorkerFixture.join(victimTask)
                await victimStore.close()
                throw error
            }
            victimTask.cancel()
            try await WorkerFixture.join(victimTask)
            await victimStore.close()
            return published
        }
    }

    // MARK: Helpers

    static let users = 60

    /// A partitioned fixture with ``users`` users, one recording sender, and two workers
    /// (running while `body` runs, unless not `startingThem`); then checks the events `body`
    /// says were published: every key once, each user's order, no partition paused.
    static func withWorkers(
        startingThem: Bool = true, _ body: (WorkerFixture, RecordingSender, WorkerService, WorkerService) async throws -> Int
    ) async throws {
        try await PartitionTests.withPartitionedFixture { fixture in
            try await fixture.store.devices.importDevices((0..<users).map { TestEvents.device("d\($0)", user: "u\($0)") })
            let sender = RecordingSender(delay: .milliseconds(1))
            let (first, second) = try PartitionTests.workers(fixture, sender: sender)
            let published =
                startingThem
                ? try await PartitionTests.running([first, second]) { try await body(fixture, sender, first, second) }
                : try await body(fixture, sender, first, second)
            try PartitionTests.expectOrderedExactlyOnce(sender.sent, events: published, users: users)
            expectNoPause(sender.sent)
        }
    }

    /// Publishes steadily: 2 s, then while `change` runs (it returns the two workers left
    /// running), then 2 s more; waits until every event is delivered and nothing is in flight.
    /// Returns how many events were published.
    static func whilePublishing(
        _ fixture: WorkerFixture, _ sender: RecordingSender, _ change: () async throws -> (WorkerService, WorkerService)
    ) async throws -> Int {
        let publisher = SteadyPublisher(fixture: fixture, users: users)
        let publishing = Task { try await publisher.run() }
        do {
            try await Task.sleep(for: .seconds(2))
            let (first, second) = try await change()
            try await Task.sleep(for: .seconds(2))
            publisher.finish()
            try await publishing.value
            try await waitUntil("every delivery", timeout: .seconds(60)) { Set(sender.sent.map(\.key)).count >= publisher.published }
            try await fixture.waitUntilSettled(first, second, queues: PartitionTests.queues(fixture))
            return publisher.published
        } catch {
            publisher.finish()
            _ = await publishing.result
            throw error
        }
    }

    /// A worker configured as ``PartitionTests/workers(_:sender:)``'s.
    static func worker(_ fixture: WorkerFixture, sender: RecordingSender, name: String) throws -> WorkerService {
        let (model, _) = try PartitionTests.workers(fixture, sender: sender)
        return try WorkerService(configuration: model.configuration, store: fixture.store, sender: sender.source(name), logger: fixture.logger)
    }

    /// Waits until `workers` own `counts` partitions (in any order), disjoint and all of them.
    static func waitForShares(_ workers: [WorkerService], _ counts: [Int], within timeout: Duration) async throws {
        try await waitUntil("partitions owned \(counts)", timeout: timeout) {
            let owned = workers.map(\.ownedPartitions)
            let all = owned.reduce(into: Set<Int>()) { $0.formUnion($1) }
            return owned.map(\.count).sorted() == counts.sorted() && all.count == partitions && owned.map(\.count).reduce(0, +) == partitions
        }
    }

    /// No partition pauses 5 s or more: between two consecutive sends to users of one partition
    /// (the publisher sends to each partition's users several times a second).
    static func expectNoPause(_ sent: [RecordingSender.Sent]) {
        let byPartition = Dictionary(grouping: sent) { PartitionHash.partition(ofUser: $0.userId, count: partitions) }
        let longest =
            byPartition.values.map { deliveries in
                let times = deliveries.map(\.time).sorted()
                return zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? .zero
            }.max() ?? .zero
        log("longest pause of a partition: \(longest)")
        #expect(byPartition.count == partitions)
        #expect(longest < .seconds(5), "a partition's deliveries paused \(longest)")
    }

    static func log(_ line: String) {
        if ProcessInfo.processInfo.environment["HERALD_TEST_VERBOSE"] != nil { print("PartitionRebalanceTests: \(line)") }
    }
}

/// Publishes a few events every 50 ms, each to one user in turn with a rising sequence, until
/// finished.
final class SteadyPublisher: Sendable {
    let fixture: WorkerFixture
    let users: Int
    private let state = Mutex((published: 0, finished: false))

    init(fixture: WorkerFixture, users: Int) {
        self.fixture = fixture
        self.users = users
    }

    var published: Int { state.withLock { $0.published } }
    func finish() { state.withLock { $0.finished = true } }

    func run() async throws {
        while !state.withLock({ $0.finished }) {
            let first = published
            try await fixture.publish(
                (first..<first + 8).map { TestEvents.xml(users: ["u\($0 % users)"], parameters: ["\($0)"], sequence: $0) })
            state.withLock { $0.published += 8 }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
