import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCore
import HeraldDelivery
import HeraldStore
import Hummingbird
import Logging

/// `herald api`: the subscription REST API (legacy `Subscribe.ashx`/`Unsubscribe.ashx`, `/v1`,
/// `/healthz`, `/readyz`, `/metrics`) in its own process. SIGTERM/SIGINT stop it gracefully.
struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Run the subscription REST API.",
        discussion: """
            Needs database.url (a migrated database: run `herald migrate` first) and a bearer-token \
            check: api.jwt_secret, api.jwt_public_key_path or api.introspection_url. When amqp.url \
            is set, /readyz also checks the broker. Resent pushes go through worker.sender (the log \
            sender by default). Prints "herald api listening on HOST:PORT" once it accepts \
            connections. See docs/api.md.
            """
    )

    @Option(name: .long, help: "Address to listen on, host:port (port 0 picks a free one). Overrides api.listen.")
    var listen: String?

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let (settings, logger) = try global.settings(logger: "herald.api") { $0.set(.apiListen, flag: listen) }

        let metrics = PrometheusMetrics.render
        _ = PrometheusMetrics.registry
        // Configuration, credential files included, is checked before anything starts: a problem
        // is printed and ends the command with exit status 78 (EX_CONFIG).
        let configuration: APIConfiguration
        let store: Store
        do {
            configuration = try APISettings.configuration(settings: settings)
            store = try Store(configuration: try RuntimeSettings.store(settings), logger: logger)
        } catch {
            Console.error("herald api: \(error)")
            throw ExitCode(78)
        }
        var sender: (any PushSender)?
        var probe: BrokerProbe?
        let application: any ApplicationProtocol
        do {
            let resendSender = try SenderSettings.makeSender(settings: settings, logger: logger, unset: .log)
            sender = resendSender
            var checks: [String: APIDependencies.ReadinessCheck] = [:]
            if settings.string(.amqpURL) != nil {
                let broker = BrokerProbe(configuration: try RuntimeSettings.amqp(settings, connectionName: "herald api readiness"), logger: logger)
                checks["broker"] = { try await broker.check() }
                probe = broker
            }
            application = try await APISettings.makeApplication(
                configuration: configuration, store: store, readinessChecks: checks, resendHandler: SenderResendHandler(sender: resendSender),
                metrics: metrics, logger: logger,
                onServerRunning: { port in
                    try? FileHandle.standardOutput.write(contentsOf: Data("herald api listening on \(configuration.host):\(port)\n".utf8))
                }
            )
        } catch {
            Console.error("herald api: \(error)")
            await Self.stop(store: store, sender: sender, probe: probe)
            throw ExitCode(78)
        }
        do {
            try await store.checkHealth()
        } catch {
            logger.warning("The database is not ready; /readyz will say so", metadata: [LogKey.error: "\(error)"])
        }
        store.start()
        do {
            try await application.runService()
        } catch {
            await Self.stop(store: store, sender: sender, probe: probe)
            throw error
        }
        await Self.stop(store: store, sender: sender, probe: probe)
    }

    private static func stop(store: Store, sender: (any PushSender)?, probe: BrokerProbe?) async {
        await probe?.close()
        await sender?.shutdown()
        await store.close()
    }
}
