import Foundation
import HeraldAMQP
import HeraldCore
import HeraldSandbox
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Issue 41: kill -9 of the worker that holds the backlog while it drains one user's burst
/// through the real APNs sender (the sandbox answering after 20 ms, like a provider's round
/// trip), then a restart: the iPhone gets every push, in order. Only the last pushes before the
/// kill (those whose record was not durable yet) may arrive twice, with the same collapse id (docs/architecture.md, "Guarantees": the
/// in-doubt window).
@Suite("Backlog crash", .timeLimit(.minutes(3)))
struct BacklogCrashTests {
    /// Without partitions (the backlog's lock) and with them (the user's partition's owner).
    @Test(arguments: [0, PartitionTests.partitions])
    func killNineWhileTheBacklogDrainsThenARestartSendsTheRestInOrder(partitions: Int) async throws {
        let body: (WorkerFixture) async throws -> Void = { fixture in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-backlog-crash-\(UUID().uuidString)")
            var configuration = SandboxConfiguration(directory: directory, topics: [ProviderDeliveryTests.topic])
            configuration.responseDelay = .milliseconds(20)
            let sandbox = try await Sandbox.start(configuration)
            defer { try? FileManager.default.removeItem(at: directory) }
            do {
                try await run(fixture, sandbox, partitions: partitions)
                await sandbox.shutdown()
            } catch {
                await sandbox.shutdown()
                throw error
            }
        }
        if partitions > 0 { try await PartitionTests.withPartitionedFixture(body) } else { try await WorkerFixture.with(body) }
    }

    private func run(_ fixture: WorkerFixture, _ sandbox: RunningSandbox, partitions: Int) async throws {
        let token = TestEvents.apnsToken(41)
        try await fixture.store.devices.importDevices([TestEvents.device("phone", user: "busy", platform: .ios, token: token)])
        let count = 300
        let events = (0..<count).map { TestEvents.xml(users: ["busy"], parameters: ["\($0)", "RUB"], sequence: $0) }
        try await fixture.publish(events)
        let environment = WorkerProcessEnvironment.make(fixture, extra: ["HERALD_WORKER_THREADS": "4", "HERALD_WORKER_PARTITIONS": "\(partitions)"])
        let arguments = ["worker", "--config", sandbox.files.configuration.path]

        let first = try HeraldProcess(arguments, environment: environment, outputDirectory: WorkerProcessEnvironment.outputDirectory)
        try await waitUntil("a few dozen pushes with the rest queued", timeout: .seconds(60)) {
            guard first.isRunning else { throw TestEnvironmentError("herald worker exited: \(first.stderr)") }
            let queued = (try? await fixture.store.backlog.count()) ?? 0
            return sandbox.pushes.count >= 40 && queued > 0
        }
        first.signal(SIGKILL)
        #expect(await first.waitForExit(timeout: .seconds(10)) != nil)
        let atKill = sandbox.pushes.count
        #expect(atKill < count, "killed mid-drain")

        let second = try HeraldProcess(arguments, environment: environment, outputDirectory: WorkerProcessEnvironment.outputDirectory)
        try await waitUntil("every push and an empty backlog", timeout: .seconds(60)) {
            guard second.isRunning else { throw TestEnvironmentError("herald worker exited: \(second.stderr)") }
            let queued = try? await fixture.store.backlog.count()
            return Set(sandbox.pushes.compactMap(Self.sequence)).count == count && queued == 0
        }
        second.signal(SIGTERM)
        #expect(await second.waitForExit(timeout: .seconds(20)) == 0, "graceful exit: \(second.stderr)")

        let pushes = sandbox.pushes.filter { $0.token == token }
        let sequences = pushes.compactMap(Self.sequence)
        // A repeat is a push sent just before the kill whose record was not durable yet (the one
        // in flight, or one answered within the last record write): sent again after the restart,
        // under the same collapse id, so the device shows it once.
        let beforeKill = Array(sequences.prefix(atKill))
        var firstIndex: [Int: Int] = [:]
        var inOrder: [Int] = []
        var repeats: [Int] = []
        for (index, sequence) in sequences.enumerated() {
            if let earlier = firstIndex[sequence] {
                repeats.append(sequence)
                #expect(pushes[index].headers["apns-collapse-id"] == pushes[earlier].headers["apns-collapse-id"])
            } else {
                firstIndex[sequence] = index
                inOrder.append(sequence)
            }
        }
        #expect(inOrder == Array(0..<count), "out of order or missing (\(atKill) pushes at the kill)")
        // The repeats are the tail of what went out before the kill (answered, record not yet
        // durable: a few, more when the database is slow), each once.
        let tail = Array(beforeKill.suffix(repeats.count))
        #expect(repeats.sorted() == tail.sorted() && Set(repeats).count == repeats.count, "repeated \(repeats); the last before the kill: \(tail)")
        #expect(repeats.count <= 10)
        // With partitions, a copy's journal key names its partition (the user's).
        let suffix = partitions > 0 ? "#p\(PartitionHash.partition(ofUser: "busy", count: partitions))/\(partitions)" : ""
        for event in events {
            let rows = try await fixture.store.journal.deliveries(ofMessage: MessageKey(text: DeliveryKey.messageKey(forBody: event) + suffix))
            #expect(rows.map(\.state) == [.sent])
        }
        #expect(try await fixture.depth(fixture.topology.deadLetterQueue) == 0)
        if partitions > 0 {
            for queue in PartitionTests.queues(fixture) { #expect(try await fixture.depth(queue) == 0) }
        }
    }

    /// The event's first parameter: its place in the burst.
    static func sequence(_ push: RecordedPush) -> Int? {
        ((push.json?["aps"] as? [String: Any])?["acme_params"] as? [[String: String]])?.first?["value"].flatMap { Int($0) }
    }
}
