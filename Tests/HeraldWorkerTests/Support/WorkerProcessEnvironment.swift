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

    static var outputDirectory: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("herald-worker-tests")
    }
}
