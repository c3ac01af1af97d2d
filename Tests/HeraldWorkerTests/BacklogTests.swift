import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Issue 41: a busy user's deliveries wait in its backlog in PostgreSQL, not in the broker's
/// prefetch window, so one user's burst holds back nobody else; they go out in order, also
/// after a restart.
@Suite("Per-user backlog", .timeLimit(.minutes(2)))
struct BacklogTests {
    /// One user's burst of 80 pushes to an iPhone whose provider answers in 50 ms (4 s, one at a
    /// time), published first, then one push each for 40 other users (Android, answered at
    /// once), with a prefetch window of 20. Held in the window, the burst would let the others
    /// in only once 60 of its pushes were out (3 s); queued in the backlog, the others go out
    /// while the burst has barely begun, and the burst keeps its order.
    @Test func aBurstForOneUserHoldsBackNobodyElse() async throws {
        try await WorkerFixture.with { fixture in
            let others = (0..<40).map { "other-\($0)" }
            try await fixture.store.devices.importDevices(
                [TestEvents.device("hot-phone", user: "hot", platform: .ios, token: TestEvents.apnsToken(999))]
                    + others.map { TestEvents.device("\($0)-phone", user: $0, platform: .android) })
            let sender = RecordingSender()
            sender.setSlow(.ios, .milliseconds(50))
            let burst = (0..<80).map { TestEvents.xml(users: ["hot"], parameters: ["\($0)", "RUB"], sequence: $0) }
            let rest = others.enumerated().map {
                TestEvents.xml(users: [$0.element], parameters: ["\(1_000 + $0.offset)", "RUB"], sequence: 1_000 + $0.offset)
            }
            var configuration = fixture.configuration(lanes: 4, prefetch: 20)
            configuration.backlogAfter = 4
            try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                try await fixture.publish(burst + rest)
                try await waitUntil("every other user's push", timeout: .seconds(20)) { sender.sent.filter { $0.platform == .android }.count == others.count }
                let burstSentSoFar = sender.sent.filter { $0.platform == .ios }.count
                #expect(burstSentSoFar < 40, "the others waited for \(burstSentSoFar) of the burst's pushes")
                #expect(worker.statistics.queued > 0)
                try await waitUntil("the whole burst", timeout: .seconds(30)) { sender.sent.filter { $0.platform == .ios }.count == burst.count }
                try await fixture.waitUntilSettled(worker)
            }
            let hot = sender.sent.filter { $0.platform == .ios }.compactMap(OrderingTests.sequence)
            #expect(hot == Array(0..<80), "the burst out of order or not exactly once")
            #expect(try await fixture.store.backlog.count() == 0, "the backlog is empty once sent")
            let positions = sender.sent.filter { $0.platform == .ios }.map(\.position)
            #expect(positions == positions.sorted() && Set(positions).count == positions.count)
        }
    }

    /// A worker stops with a user's deliveries queued; the next worker sends the rest, each
    /// once, in order, and records them as sent.
    @Test func queuedDeliveriesGoOutAfterARestart() async throws {
        try await WorkerFixture.with { fixture in
            let (events, slow, configuration) = try await Self.stopWithDeliveriesQueued(fixture)
            let fast = RecordingSender()
            try await fixture.withWorker(sender: fast, configuration: configuration) { worker in
                try await waitUntil("the rest", timeout: .seconds(20)) { slow.count + fast.count == events.count }
                try await waitUntil("the backlog drained", timeout: .seconds(10)) { (try? await fixture.store.backlog.count()) == 0 }
            }
            let sequences = (slow.sent + fast.sent).compactMap(OrderingTests.sequence)
            #expect(sequences == Array(0..<30), "sent out of order, twice, or not at all")
            try await Self.expectEverySent(events, fixture)
        }
    }

    /// The SRE's drain before a format change: the queue is empty, but deliveries are still owed
    /// from the backlog (their messages were acknowledged). `herald drain` sends them and is
    /// complete only once the backlog is empty.
    @Test func drainWaitsForTheBacklog() async throws {
        try await WorkerFixture.with { fixture in
            let (events, _, _) = try await Self.stopWithDeliveriesQueued(fixture)
            #expect(try await fixture.depth(fixture.topology.queue) == 0, "only the backlog is left")
            let result = try HeraldCLI.run(
                ["drain", "--timeout", "60s", "--sender", "null"], environment: WorkerProcessEnvironment.make(fixture), timeout: .seconds(90))
            #expect(result.status == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
            #expect(result.stdout.contains("Drain complete"))
            #expect(try await fixture.store.backlog.count() == 0)
            try await Self.expectEverySent(events, fixture)
        }
    }

    /// The backlog lock's session ends (as when PostgreSQL restarts) while a user's burst is
    /// queued, and more of the user's pushes arrive: they wait until the worker holds the lock
    /// again (nobody else took it: it goes on where it was), then go after the queued ones. The
    /// whole burst arrives in order, each push once.
    @Test func aLostLockHoldsTheUsersNewPushesBackUntilItIsBack() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("phone", user: "busy", platform: .ios, token: TestEvents.apnsToken(2))])
            let sender = RecordingSender()
            sender.setSlow(.ios, .milliseconds(30))
            let first = (0..<40).map { TestEvents.xml(users: ["busy"], parameters: ["\($0)", "RUB"], sequence: $0) }
            let second = (40..<60).map { TestEvents.xml(users: ["busy"], parameters: ["\($0)", "RUB"], sequence: $0) }
            var configuration = fixture.configuration(lanes: 2, prefetch: 10)
            configuration.backlogAfter = 4
            configuration.backlogCheckInterval = .milliseconds(300)
            try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                try await fixture.publish(first)
                try await waitUntil("the burst queued", timeout: .seconds(20)) { worker.statistics.acked == first.count }
                #expect(sender.count < first.count, "all sent already: the test proves nothing")
                let ended = try await fixture.database.admin.query(
                    """
                    SELECT count(pg_terminate_backend(pid)) FROM pg_locks
                    WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """)
                #expect(try ended.first?.decode(Int.self, at: 0) == 1, "the worker's lock session")
                try await fixture.publish(second)
                try await waitUntil("every push", timeout: .seconds(30)) { sender.count >= first.count + second.count }
                try await fixture.waitUntilSettled(worker)
            }
            let sequences = sender.sent.compactMap(OrderingTests.sequence)
            #expect(sequences == Array(0..<60), "sent out of order, twice, or not at all")
            try await Self.expectEverySent(first + second, fixture)
        }
    }

    /// Runs a worker with a slow provider until every message of a burst is acknowledged, and
    /// stops it while some of the burst's deliveries are still queued.
    private static func stopWithDeliveriesQueued(_ fixture: WorkerFixture) async throws -> ([Data], RecordingSender, WorkerConfiguration) {
        try await fixture.store.devices.importDevices([TestEvents.device("phone", user: "busy", platform: .ios, token: TestEvents.apnsToken(1))])
        let slow = RecordingSender()
        slow.setSlow(.ios, .milliseconds(100))
        let events = (0..<30).map { TestEvents.xml(users: ["busy"], parameters: ["\($0)", "RUB"], sequence: $0) }
        var configuration = fixture.configuration(lanes: 2, prefetch: 10)
        configuration.backlogAfter = 4
        try await fixture.withWorker(sender: slow, configuration: configuration) { worker in
            try await fixture.publish(events)
            try await waitUntil("every message acknowledged", timeout: .seconds(20)) { worker.statistics.acked == events.count }
            #expect(slow.count < events.count, "all sent before the stop: the test proves nothing")
        }
        let queued = try await fixture.store.backlog.count()
        #expect(queued > 0)
        #expect(queued + slow.count == events.count, "queued \(queued) + sent \(slow.count)")
        return (events, slow, configuration)
    }

    private static func expectEverySent(_ events: [Data], _ fixture: WorkerFixture) async throws {
        for event in events {
            let rows = try await fixture.store.journal.deliveries(ofMessage: MessageKey(text: DeliveryKey.messageKey(forBody: event)))
            #expect(rows.map(\.state) == [.sent])
        }
    }
}
