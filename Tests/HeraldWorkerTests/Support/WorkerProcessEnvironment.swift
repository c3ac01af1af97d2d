import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// The environment that points a `herald` child process at a fixture's queue and database.
enum WorkerProcessEnvironment {
    static func make(_ fixture: WorkerFixture, extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "HERALD_AMQP_URL": TestEnvironment.amqpURL,
            "HERALD_AMQP_QUEUE": fixture.topology.queue,
            "HERALD_AMQP_EXCHANGE": fixture.topology.exchange,
            "HERALD_DATABASE_URL": fixture.database.url,
            "HERALD_LOG_LEVEL": "warning",
            "HERALD_WORKER_SHUTDOWN_TIMEOUT": "10s",
        ]
        environment.merge(extra) { $1 }
        return environment
    }

    /// Starts `herald worker` for the fixture (null sender) with its operations endpoint on a
    /// free loopback port; returns once the worker logged where it listens.
    static func startWithEndpoint(_ fixture: WorkerFixture) async throws -> (worker: HeraldProcess, base: String) {
        let environment = make(
            fixture,
            extra: [
                "HERALD_WORKER_METRICS_LISTEN": "127.0.0.1:0", "HERALD_WORKER_SENDER": "null", "HERALD_LOG_LEVEL": "info",
            ])
        let worker = try HeraldProcess(["worker"], environment: environment, outputDirectory: outputDirectory)
        var port = 0
        try await waitUntil("the worker's endpoint", timeout: .seconds(30)) {
            guard worker.isRunning else { throw TestEnvironmentError("herald worker exited: \(worker.stderr)") }
            let line = worker.stderr.split(separator: "\n").first { $0.contains("herald.listen=127.0.0.1:") }
            port = line.flatMap { $0.split(separator: ":").last }.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
            return port > 0
        }
        return (worker, "http://127.0.0.1:\(port)")
    }

    static var outputDirectory: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("herald-worker-tests")
    }
}
