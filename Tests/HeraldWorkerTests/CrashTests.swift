import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Kill -9 of the worker in the middle of 20,000 messages, then a restart: every delivery
/// reaches the sender at least once and none twice (the real `herald worker` binary, with the
/// log sender writing to a file). The batch is large enough that the kill lands mid-run
/// however fast the pipeline gets (4,000 were drained before the kill once it got faster).
@Suite("Crash", .timeLimit(.minutes(3)))
struct CrashTests {
    @Test func killNineMidRunThenRestartDeliversEveryKeyExactlyOnce() async throws {
        try await WorkerFixture.with { fixture in
            let users = 100
            let messages = 20_000
            try await fixture.store.devices.importDevices(
                (0..<users).map { TestEvents.device("d\($0)", user: "u\($0)", platform: $0 % 2 == 0 ? .ios : .android) })
            try await fixture.publish((0..<messages).map { TestEvents.xml(users: ["u\($0 % users)"], parameters: ["\($0)"], sequence: $0) })
            let file = WorkerProcessEnvironment.outputDirectory.appendingPathComponent("crash-\(UUID().uuidString).jsonl")
            try FileManager.default.createDirectory(at: WorkerProcessEnvironment.outputDirectory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: file) }
            let environment = WorkerProcessEnvironment.make(
                fixture,
                extra: [
                    "HERALD_WORKER_SENDER": "log", "HERALD_WORKER_LOG_SENDER_FILE": file.path, "HERALD_WORKER_THREADS": "16",
                ])

            let first = try HeraldProcess(["worker"], environment: environment, outputDirectory: WorkerProcessEnvironment.outputDirectory)
            try await waitUntil("a few hundred deliveries", timeout: .seconds(60)) { Self.lines(file).count >= 300 || !first.isRunning }
            #expect(first.isRunning, "the worker died on its own: \(first.stderr)")
            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(10)) != nil)
            let atKill = Self.lines(file).count
            #expect(atKill < messages, "killed mid-run")

            let second = try HeraldProcess(["worker"], environment: environment, outputDirectory: WorkerProcessEnvironment.outputDirectory)
            do {
                try await waitUntil("every delivery", timeout: .seconds(90)) { Set(Self.keys(file)).count >= messages || !second.isRunning }
            } catch {
                // What the worker was doing when it stopped making progress, for the CI log.
                let ready = try? await fixture.amqp.queueState(fixture.topology.queue)
                Issue.record(
                    """
                    \(Set(Self.keys(file)).count) of \(messages) keys, \(atKill) lines at the kill; queue: \(ready.map { "\($0.messageCount) ready, \($0.consumerCount) consumers" } ?? "unknown")
                    the restarted worker's log, last lines:
                    \(second.stderr.split(separator: "\n").suffix(40).joined(separator: "\n"))
                    """)
                await second.waitForExit(timeout: .zero)
                throw error
            }
            try await waitUntil("the queue is empty", timeout: .seconds(30)) {
                (try? await fixture.amqp.queueState(fixture.topology.queue).messageCount) == 0
            }
            second.signal(SIGTERM)
            #expect(await second.waitForExit(timeout: .seconds(20)) == 0, "graceful exit: \(second.stderr)")

            let keys = Self.keys(file)
            let counts = Dictionary(keys.map { ($0, 1) }, uniquingKeysWith: +)
            #expect(counts.count == messages, "every delivery key at least once")
            #expect(counts.values.filter { $0 > 1 }.isEmpty, "no delivery key twice (\(keys.count) lines, \(counts.count) keys, \(atKill) before the kill)")
            #expect(try await fixture.depth(fixture.topology.deadLetterQueue) == 0)
        }
    }

    static func lines(_ file: URL) -> [Substring] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n")
    }

    static func keys(_ file: URL) -> [String] {
        lines(file).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["delivery_key"] as? String
        }
    }
}
