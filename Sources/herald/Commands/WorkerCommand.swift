import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCore
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
            must be chosen: --sender / worker.sender / HERALD_WORKER_SENDER (providers, log, null); \
            provider credentials are checked before anything is consumed. With --partitions K (worker.partitions) every process \
            keeps each user's order across processes (an ingest stage and K partition queues; \
            every process must use the same K). See docs/operations.md.
            """
    )

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var options: WorkerOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let (settings, logger) = try global.settings(connection, options, logger: "herald.worker")
        try await Self.runWorker(settings: settings, logger: logger)
    }

    /// Builds store, sender and worker from `settings` and runs the worker in a service group
    /// that turns SIGTERM and SIGINT into a graceful shutdown; with `worker.metrics_listen`, next
    /// to `/metrics`, `/healthz` and `/readyz` (ready while the worker consumes).
    static func runWorker(settings: Settings, logger: Logger) async throws {
        var endpoint: (host: String, port: Int)?
        if settings.string(.workerMetricsListen) != nil {
            do {
                endpoint = try APISettings.listenAddress(settings: settings, key: .workerMetricsListen)
            } catch {
                Console.error("herald worker: \(error)")
                throw ExitCode(78)
            }
            _ = PrometheusMetrics.registry  // before the worker creates its counters
        }
        let (worker, store, sender) = try await prepareWithSender(settings: settings, logger: logger, name: "herald worker")
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: worker)]
        if let endpoint {
            services.append(.init(service: operationsMetrics(worker: worker, sender: sender, logger: logger)))
            services.append(
                .init(
                    service: APIServer.makeOperationsApplication(
                        host: endpoint.host, port: endpoint.port, store: store, readinessChecks: ["worker": WorkerNotConsuming.check(worker)],
                        metrics: PrometheusMetrics.render, logger: logger,
                        onServerRunning: { port in logger.info("Serving /metrics, /healthz and /readyz", metadata: [LogKey.listen: "\(endpoint.host):\(port)"])
                        }
                    )))
        }
        try await runGroup(services, worker: worker, store: store, logger: logger, name: "herald worker")
    }

    /// The queue depths, provider counters and certificate expiry that the dashboard and the
    /// alerts use (``OperationsMetrics``), for a process that serves `/metrics`.
    static func operationsMetrics(worker: WorkerService, sender: any PushSender, logger: Logger) -> OperationsMetrics {
        OperationsMetrics(
            amqp: worker.configuration.amqp, topology: worker.configuration.topology,
            partitionQueues: worker.configuration.partitionLayout?.queueNames ?? [], sender: sender,
            certificateExpiry: ((sender as? RoutingSender)?.ios as? APNsSender)?.certificateExpiry, logger: logger
        )
    }

    /// Runs `services` (the worker first: a graceful shutdown stops them in reverse order) until
    /// SIGTERM or SIGINT, bounded by the worker's shutdown timeout + 15 s; closes the store after.
    static func runGroup(
        _ services: [ServiceGroupConfiguration.ServiceConfiguration], worker: WorkerService, store: Store, logger: Logger, name: String
    ) async throws {
        var group = ServiceGroupConfiguration(services: services, logger: logger)
        group.gracefulShutdownSignals = [.sigterm, .sigint]
        group.maximumGracefulShutdownDuration = worker.configuration.shutdownTimeout + .seconds(15)
        do {
            try await ServiceGroup(configuration: group).run()
        } catch {
            logger.error("\(name) stopped with an error", metadata: [LogKey.error: "\(error)"])
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
        let prepared = try await prepareWithSender(settings: settings, logger: logger, name: name)
        return (prepared.worker, prepared.store)
    }

    /// ``prepare(settings:logger:name:)`` that also returns the worker's sender, for a caller
    /// that sends through it too (`herald serve`'s resend route). The worker shuts it down.
    static func prepareWithSender(
        settings: Settings, logger: Logger, name: String
    ) async throws -> (worker: WorkerService, store: Store, sender: any PushSender) {
        var configuration: WorkerConfiguration
        let storeConfiguration: StoreConfiguration
        let sender: any PushSender
        do {
            configuration = try RuntimeSettings.worker(settings)
            storeConfiguration = try RuntimeSettings.store(settings)
            sender = try SenderSettings.makeSender(settings: settings, logger: logger)
            configuration.lanes = try RuntimeSettings.lanes(settings, sender: sender)
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
        let worker = try WorkerService(configuration: configuration, store: store, sender: sender, logger: logger)
        return (worker, store, sender)
    }
}
