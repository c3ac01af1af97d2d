import Foundation
import HeraldStore
import HeraldTesting
import HeraldWorker
import Synchronization
import Testing

/// Fair-share partition ownership, live (`worker.partitions` = 4): a worker that joins takes its
/// share, one that stops hands its partitions over, within 10 s and under a steady publish, with
/// every delivery key sent once, each user's order kept, and no pause of the deliveries longer
/// than 5 s.
@Suite("Partition rebalance", .timeLimit(.minutes(3)))
struct PartitionRebalanceTests {
    static let partitions = PartitionTests.partitions

    /// Two workers own two partitions each; a third joins: within 10 s they own 2, 1 and 1.
    @Test func aWorkerThatJoinsTakesItsShareWithinTenSeconds() async throws {
        try await PartitionTests.withPartitionedFixture { fixture in
            let users = 60
            try await fixture.store.devices.importDevices((0..<users).map { TestEvents.device("d\($0)", user: "u\($0)") })
            let sender = RecordingSender(delay: .milliseconds(1))
            let (first, second) = try PartitionTests.workers(fixture, sender: sender)
            let third = try Self.worker(fixture, sender: sender, name: "third")
            let publisher = SteadyPublisher(fixture: fixture, users: users)
            try await PartitionTests.running([first, second]) {
                try await Self.waitForShares([first, second], [2, 2], within: .seconds(20))
                let publishing = Task { try await publisher.run() }
                try await Task.sleep(for: .seconds(2))
                let thirdTask = Task { try await third.run() }
                do {
                    let joined = ContinuousClock.now
                    try await Self.waitForShares([first, second, third], [1, 1, 2], within: .seconds(10))
                    Self.log("joined: balanced after \(ContinuousClock.now - joined)")
                    try await Task.sleep(for: .seconds(2))
                    publisher.finish()
                    try await publishing.value
                    try await waitUntil("every delivery", timeout: .seconds(60)) { Set(sender.sent.map(\.key)).count >= publisher.published }
                    try await fixture.waitUntilSettled(first, second, third, queues: PartitionTests.queues(fixture))
                    #expect(third.statistics.consumed > 0, "the third worker carried its partition")
                } catch {
                    publisher.finish()
                    third.stop()
                    try? await WorkerFixture.join(thirdTask)
                    throw error
                }
                third.stop()
                try await WorkerFixture.join(thirdTask)
            }
            try PartitionTests.expectOrderedExactlyOnce(sender.sent, events: publisher.published, users: users)
            Self.expectNoPause(sender.sent)
        }
    }

    /// Three workers own 2, 1 and 1; one stops gracefully: within 10 s the other two own two
    /// each.
    @Test func aWorkerThatStopsHandsItsPartitionsOverWithinTenSeconds() async throws {
        try await PartitionTests.withPartitionedFixture { fixture in
            let users = 60
            try await fixture.store.devices.importDevices((0..<users).map { TestEvents.device("d\($0)", user: "u\($0)") })
            let sender = RecordingSender(delay: .milliseconds(1))
            let (first, second) = try PartitionTests.workers(fixture, sender: sender)
            let third = try Self.worker(fixture, sender: sender, name: "third")
            let publisher = SteadyPublisher(fixture: fixture, users: users)
            try await PartitionTests.running([first, second]) {
                let thirdTask = Task { try await third.run() }
                do {
                    try await Self.waitForShares([first, second, third], [1, 1, 2], within: .seconds(20))
                    let publishing = Task { try await publisher.run() }
                    try await Task.sleep(for: .seconds(2))
                    // The one that owns two, so that both others must take one.
                    let leaving = [first, second, third].first { $0.ownedPartitions.count == 2 } ?? third
                    let staying: [WorkerService] = [first, second, third].filter { $0 !== leaving }
                    leaving.stop()
                    let stopped = ContinuousClock.now
                    try await Self.waitForShares(staying, [2, 2], within: .seconds(10))
                    Self.log("left: balanced after \(ContinuousClock.now - stopped)")
                    try await Task.sleep(for: .seconds(2))
                    publisher.finish()
                    try await publishing.value
                    try await waitUntil("every delivery", timeout: .seconds(60)) { Set(sender.sent.map(\.key)).count >= publisher.published }
                    try await fixture.waitUntilSettled(staying[0], staying[1], queues: PartitionTests.queues(fixture))
                } catch {
                    publisher.finish()
                    third.stop()
                    try? await WorkerFixture.join(thirdTask)
                    throw error
                }
                third.stop()
                try await WorkerFixture.join(thirdTask)
            }
            try PartitionTests.expectOrderedExactlyOnce(sender.sent, events: publisher.published, users: users)
            Self.expectNoPause(sender.sent)
        }
    }

    // MARK: Helpers

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

    /// No gap of 5 s or more between two consecutive sends while the publisher ran (it publishes
    /// every 50 ms).
    static func expectNoPause(_ sent: [RecordingSender.Sent]) {
        let times = sent.map(\.time).sorted()
        let longest = zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? .zero
        log("longest pause between two sends: \(longest)")
        #expect(longest < .seconds(5), "deliveries paused \(longest)")
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
