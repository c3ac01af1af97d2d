import Foundation
import HeraldAMQP
import HeraldPostgres
import HeraldTesting
import Testing

/// `herald bench` stopped by Ctrl-C or SIGTERM deletes what it made before it exits: otherwise
/// its queues (with up to a million messages) would stay in the broker and its devices in the
/// database.
@Suite("herald bench, interrupted", .timeLimit(.minutes(3)))
struct BenchInterruptTests {
    @Test(.requires(.rabbitMQ, .postgreSQL), arguments: [SIGINT, SIGTERM])
    func aSignalStopsTheBenchAndDeletesItsQueuesAndDevices(signal: Int32) async throws {
        try await TestDatabase.with { client, database in
            let environment = ["HERALD_DATABASE_URL": database.url, "HERALD_AMQP_URL": TestEnvironment.amqpURL, "HERALD_LOG_LEVEL": "error"]
            #expect(try HeraldCLI.run(["migrate"], environment: environment).status == 0)
            let templates = TestEnvironment.packageRoot.appendingPathComponent("templates").path
            #expect(try HeraldCLI.run(["templates", "import", templates], environment: environment).status == 0)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-bench-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }

            // Far more rounds than the test waits for: only a signal ends it in time.
            let bench = try HeraldProcess(
                ["bench", "--events", "20000", "--rounds", "100", "--bare-rounds", "1", "--users", "300"], environment: environment, outputDirectory: folder)
            try await waitUntil("the bench's second round", timeout: .seconds(90)) {
                guard bench.isRunning else { throw TestEnvironmentError("herald bench exited: \(bench.stderr)") }
                return bench.stderr.contains("pipeline, round 2")
            }
            #expect(try await Self.benchDevices(client) == 300)

            bench.signal(signal)
            let status = await bench.waitForExit(timeout: .seconds(60))
            #expect(status == 130, "\(bench.stderr)")
            let stopped = try #require(bench.stderr.split(separator: "\n").first { $0.contains("herald bench: stopped by") }, "\(bench.stderr)")
            let runID = try #require(stopped.split(separator: " ").first { $0.hasSuffix("'s") }.map { String($0.dropLast(2)) })
            #expect(try await Self.benchDevices(client) == 0)

            let amqp = try await AMQPConnection.connect(try AMQPConfiguration(url: TestEnvironment.amqpURL))
            for queue in ["pipeline1", "pipeline2"].map({ "herald.bench.\(runID).\($0)" }) {
                do throws(AMQPError) {
                    _ = try await amqp.queueState(queue)
                    Issue.record("\(queue) is still in the broker")
                } catch {
                    #expect(error.code == .notFound, "\(queue): \(error)")
                }
            }
            await amqp.close()
        }
    }

    private static func benchDevices(_ client: PostgresClient) async throws -> Int64? {
        try await client.query("SELECT count(*) FROM devices WHERE device_id LIKE 'bench-%'", []).first?.decode(Int64.self, at: 0)
    }
}
