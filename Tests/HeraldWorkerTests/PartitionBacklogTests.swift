import Foundation
import HeraldCore
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Issues 41 and 44: with partitions, a busy user's deliveries wait in its partition's backlog
/// (the partition's owner queues and sends them), and the backlog moves with the partition.
@Suite("Partition backlog", .timeLimit(.minutes(3)))
struct PartitionBacklogTests {
    static let partitions = PartitionTests.partitions
    static let burst = 40

    /// One busy user in each partition (bursts of ``burst`` pushes to iPhones answering after
    /// 30 ms) and quiet Android users; one worker owns every partition and queues the bursts.
    /// A second worker joins and takes two partitions, with their queued deliveries: every push
    /// goes out once, each user's in order, some of the bursts from the second worker.
    @Test func aBusyUsersBacklogMovesWithItsPartition() async throws {
        try await PartitionTests.withPartitionedFixture { fixture in
            let hot = Self.oneUserPerPartition()
            let quiet = (0..<20).map { "quiet-\($0)" }
            try await fixture.store.devices.importDevices(
                hot.enumerated().map { TestEvents.device("hot-\($0.offset)", user: $0.element, platform: .ios, token: TestEvents.apnsToken(900 + $0.offset)) }
                    + quiet.map { TestEvents.device("\($0)-phone", user: $0, platform: .android) })
            // Two senders (one per worker) so that the test sees who sent what; the same clock.
            let (firstSender, secondSender) = (RecordingSender(), RecordingSender())
            for sender in [firstSender, secondSender] { sender.setSlow(.ios, .milliseconds(30)) }
            var configuration = fixture.configuration(lanes: 8, prefetch: 20)
            configuration.partitions = Self.partitions
            configuration.backlogAfter = 2
            configuration.ingestRetryInterval = .milliseconds(300)
            configuration.partitionBalanceInterval = .milliseconds(300)
            let first = try WorkerService(configuration: configuration, store: fixture.store, sender: firstSender, logger: fixture.logger)
            let second = try WorkerService(configuration: configuration, store: fixture.store, sender: secondSender, logger: fixture.logger)

            var events: [Data] = []
            for n in 0..<Self.burst {
                events += hot.map { TestEvents.xml(users: [$0], parameters: ["\(n)", "RUB"], sequence: n) }
            }
            events += quiet.enumerated().map { TestEvents.xml(users: [$0.element], parameters: ["\(1_000 + $0.offset)"], sequence: 1_000 + $0.offset) }
            let sentBySecond = try await PartitionTests.running([first]) {
                try await waitUntil("the first worker owns every partition", timeout: .seconds(20)) { first.ownedPartitions.count == Self.partitions }
                try await fixture.publish(events)
                try await waitUntil("the bursts queued and going out", timeout: .seconds(20)) {
                    (try await fixture.store.backlog.count()) > hot.count * Self.burst / 2 && firstSender.count >= hot.count
                }
                return try await PartitionTests.running([second]) {
                    try await PartitionRebalanceTests.waitForShares([first, second], [2, 2], within: PartitionRebalanceTests.changeBound)
                    try await waitUntil("every push", timeout: .seconds(60)) { firstSender.count + secondSender.count >= events.count }
                    try await waitUntil("the backlog drained", timeout: .seconds(10)) { (try? await fixture.store.backlog.count()) == 0 }
                    try await fixture.waitUntilSettled(first, second, queues: PartitionTests.queues(fixture))
                    return secondSender.sent.filter { $0.platform == .ios }.count
                }
            }
            #expect(first.statistics.queued > 0, "the bursts waited in the backlog")
            #expect(sentBySecond > 0, "the moved partitions' queued pushes went from the second worker")
            let sent = (firstSender.sent + secondSender.sent).sorted { $0.time < $1.time }
            #expect(Set(sent.map(\.key)).count == sent.count, "no push twice")
            for user in hot {
                let sequences = sent.filter { $0.userId == user }.compactMap(OrderingTests.sequence)
                #expect(sequences == Array(0..<Self.burst), "\(user): out of order, twice, or missing")
            }
            #expect(Set(sent.filter { $0.platform == .android }.map(\.userId)) == Set(quiet))
        }
    }

    /// The first user id found in each partition, in partition order.
    static func oneUserPerPartition() -> [String] {
        (0..<partitions).map { partition in
            (0...).lazy.map { "hot-\($0)" }.first { PartitionHash.partition(ofUser: $0, count: partitions) == partition }!
        }
    }
}
