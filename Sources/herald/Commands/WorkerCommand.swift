import ArgumentParser
import Foundation
import HeraldDelivery
import HeraldStore
import HeraldWorker
import Logging
import ServiceLifecycle
import UnixSignals

/// `herald worker`: Herald's main job. Consumes the event queue and delivers every event to the
/// matching devices, until SIGTERM or SIGINT (graceful: stop consuming, finish and acknowledge
/// what is in flight within `worker.shutdown_timeout`, leave the rest to the broker).
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Consume events from RabbitMQ and deliver them to APNs, FCM or the log.",
        discussion: """
            Needs a migrated database (herald migrate) with templates (herald templates import). \
            Every option is also a configuration key and an environment variable: --threads is \
            worker.threads / HERALD_WORKER_THREADS, --queue is amqp.queue / HERALD_AMQP_QUEUE; \
            the broker and database come from HERALD_AMQP_URL and HERALD_DATABASE_URL. The sender \
            is chosen by worker.sender (log, null, providers); provider credentials are checked \
            before anything is consumed. With --partitions K (worker.partitions) every process \
            keeps each user's order across processes (an ingest stage and K partition queues; \
            every process must use the same K). See docs/operations.md.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "Lanes: users with a delivery in flight at once (worker.threads, default 64).")
    var threads: Int?

    @Option(help: "Unacknowledged messages held at once (amqp.prefetch, default 300).")
    var prefetch: Int?

    @Option(help: "Partition queues keeping each user's order across worker processes; 0 = off (worker.partitions, default 0; the same in every process).")
    var partitions: Int?

    @Option(help: "Where payloads go: log, null or providers (worker.sender, default log).")
    var sender: String?

    @Option(help: "File the log sender appends to (worker.log_sender_file, default standard output).")
    var logSenderFile: String?

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        var settings = try global.settings()
        connection.apply(to: &settings)
        settings.set(.workerThreads, flag: threads.map(String.init))
        settings.set(.amqpPrefetch, flag: prefetch.map(String.init))
        settings.set(.workerSender, flag: sender)
        settings.set(.workerLogSenderFile, flag: logSenderFile)
        settings.set(.workerPartitions, flag: partitions.map(String.init))
        let logger = RuntimeSettings.logger("herald.worker", settings: settings)
        try await Self.runWorker(settings: settings, logger: logger)
    }

    /// Builds store, sender and worker from `settings` and runs the worker in a service group
    /// that turns SIGTERM and SIGINT into a graceful shutdown.
    static func runWorker(settings: Settings, logger: Logger) async throws {
        let (worker, store) = try await prepare(settings: settings, logger: logger, name: "herald worker")
        var group = ServiceGroupConfiguration(services: [.init(service: worker)], logger: logger)
        group.gracefulShutdownSignals = [.sigterm, .sigint]
        group.maximumGracefulShutdownDuration = worker.configuration.shutdownTimeout + .seconds(15)
        do {
            try await ServiceGroup(configuration: group).run()
        } catch {
            logger.error("Worker stopped with an error", metadata: ["herald.error": "\(error)"])
            await store.close()
            throw ExitCode(1)
        }
        await store.close()
    }

    /// The worker and its (open, checked) store for `settings`. Configuration problems, a
    /// provider credential that does not load included, are printed on standard error and end
    /// the command with exit status 78 (EX_CONFIG) before anything is consumed; an unreachable
    /// or unmigrated database with status 1.
    static func prepare(settings: Settings, logger: Logger, name: String) async throws -> (WorkerService, Store) {
        let configuration: WorkerConfiguration
        let storeConfiguration: StoreConfiguration
        let sender: any PushSender
        do {
            configuration = try RuntimeSettings.worker(settings)
            storeConfiguration = try RuntimeSettings.store(settings)
            sender = try SenderSettings.makeSender(settings: settings, logger: logger)
        } catch {
            Console.error("\(name): \(error)")
            throw ExitCode(78)
        }
        let store = try Store(configuration: storeConfiguration, logger: logger)
        do {
            try await store.checkHealth()
        } catch {
            Console.error("\(name): \(error)")
            await store.close()
            await sender.shutdown()
            throw ExitCode(1)
        }
        return (try WorkerService(configuration: configuration, store: store, sender: sender, logger: logger), store)
    }
}
