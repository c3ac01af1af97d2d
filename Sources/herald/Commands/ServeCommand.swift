import ArgumentParser
import Foundation
import HeraldAPI
import HeraldDelivery
import HeraldStore
import HeraldWorker
import Logging
import ServiceLifecycle
import UnixSignals

/// `herald serve`: the REST API and the worker in one process, for installations that want one
/// thing to run. They share the database pool, the sender (the resend route sends through the
/// worker's providers) and `/metrics` (which then carries the worker's counters too).
///
/// SIGTERM/SIGINT stop the API first (no new resend requests), then the worker gracefully, as
/// `herald worker` does.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the REST API and the worker in one process.",
        discussion: """
            Takes the keys of both herald api and herald worker (see herald config keys). \
            /readyz reports the database and whether the worker is consuming. Prints \
            "herald serve listening on HOST:PORT" once the API accepts connections. See \
            docs/operations.md and docs/api.md.
            """
    )

    @Option(name: .long, help: "Address to listen on, host:port (port 0 picks a free one). Overrides api.listen.")
    var listen: String?

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var options: WorkerOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let (settings, logger) = try global.settings(connection, options, logger: "herald.serve") { $0.set(.apiListen, flag: listen) }

        // Bootstrap metrics before the worker creates its counters.
        let metrics = PrometheusMetrics.render
        _ = PrometheusMetrics.registry
        // The API's configuration (its token key file included) is checked before the worker's.
        let configuration: APIConfiguration
        do {
            configuration = try APISettings.configuration(settings: settings)
        } catch {
            Console.error("herald serve: \(error)")
            throw ExitCode(78)
        }
        let (worker, store, sender) = try await WorkerCommand.prepareWithSender(settings: settings, logger: logger, name: "herald serve")
        let application: any Service
        do {
            application = try await APISettings.makeApplication(
                configuration: configuration, store: store, readinessChecks: ["worker": WorkerNotConsuming.check(worker)],
                resendHandler: SenderResendHandler(sender: sender), metrics: metrics, logger: logger,
                onServerRunning: { port in
                    try? FileHandle.standardOutput.write(contentsOf: Data("herald serve listening on \(configuration.host):\(port)\n".utf8))
                }
            )
        } catch {
            // The token checker cannot be built: a configuration error.
            Console.error("herald serve: \(error)")
            await sender.shutdown()
            await store.close()
            throw ExitCode(78)
        }
        // Graceful shutdown runs in reverse order: the API first, then the worker.
        try await WorkerCommand.runGroup(
            [
                .init(service: worker), .init(service: WorkerCommand.operationsMetrics(worker: worker, sender: sender, logger: logger)),
                .init(service: application),
            ],
            worker: worker, store: store, logger: logger, name: "herald serve"
        )
    }
}
