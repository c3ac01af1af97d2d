import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldPostgres
import HeraldStore
import HeraldWorker
import Logging

/// Builds the libraries' configuration structs from ``Settings``: the one place where the broker,
/// database and worker keys are read, so that every command (worker, drain, publish, dlq, bench…)
/// reads them the same way. Every getter throws ``ConfigurationError`` naming the key.
enum RuntimeSettings {
    /// A logger at `log.level` (checked by ``GlobalOptions/settings()``).
    static func logger(_ label: String, settings: Settings) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = (try? settings.choice(.logLevel, default: Logger.Level.info)) ?? .info
        return logger
    }

    static func amqp(_ settings: Settings, connectionName: String) throws -> AMQPConfiguration {
        let url = try settings.require(.amqpURL)
        var configuration: AMQPConfiguration
        do {
            configuration = try AMQPConfiguration(url: url)
        } catch {
            throw ConfigurationError(.invalidValue, key: SettingKey.amqpURL.dotted, source: settings.lookup(.amqpURL)?.source, reason: error.message)
        }
        if let tls = configuration.tls {
            try checkTLSFiles(
                [("cacertfile", tls.caCertificatePath), ("certfile", tls.clientCertificatePath), ("keyfile", tls.clientKeyPath)],
                key: .amqpURL, settings: settings
            )
        }
        configuration.heartbeat = try settings.duration(.amqpHeartbeat, default: .seconds(30))
        if configuration.connectionName == nil { configuration.connectionName = connectionName }
        return configuration
    }

    static func topology(_ settings: Settings) throws -> HeraldTopology {
        let queue = settings.string(.amqpQueue, default: HeraldTopology.defaultQueue)
        return HeraldTopology(
            exchange: settings.string(.amqpExchange, default: HeraldTopology.defaultExchange),
            queue: queue,
            routingKey: settings.string(.amqpRoutingKey),
            queueType: try queueType(settings)
        )
    }

    /// `amqp.queue_type`: classic or quorum.
    static func queueType(_ settings: Settings) throws -> AMQPQueueType {
        guard let (raw, source) = settings.lookup(.amqpQueueType) else { return .classic }
        switch raw.lowercased() {
        case "classic": return .classic
        case "quorum": return .quorum
        default: throw ConfigurationError(.invalidValue, key: SettingKey.amqpQueueType.dotted, source: source, reason: "'\(raw)' is not one of classic, quorum")
        }
    }

    static func store(_ settings: Settings) throws -> StoreConfiguration {
        let url = try settings.require(.databaseURL)
        let poolSize = try settings.int(.databasePoolSize, default: 4, range: 1...200)
        var configuration: StoreConfiguration
        do {
            configuration = try StoreConfiguration(databaseURL: url, poolSize: poolSize)
        } catch {
            throw ConfigurationError(
                .invalidValue, key: SettingKey.databaseURL.dotted, source: settings.lookup(.databaseURL)?.source, reason: error.description)
        }
        let database = configuration.database
        try checkTLSFiles(
            [("sslrootcert", database.sslRootCertificatePath), ("sslcert", database.sslCertificatePath), ("sslkey", database.sslKeyPath)],
            key: .databaseURL, settings: settings
        )
        configuration.dedupeRetention = try settings.duration(.workerDedupeRetention, default: .seconds(86_400))
        configuration.defaultCulture = defaultCulture(settings)
        return configuration
    }

    /// `templates.default_culture`: the last step of culture fallback.
    static func defaultCulture(_ settings: Settings) -> String {
        settings.string(.templatesDefaultCulture, default: "ru-RU")
    }

    /// `worker.partitions`: 0 (off) or the partition count, the same in every process.
    static func partitions(_ settings: Settings) throws -> Int {
        try settings.int(.workerPartitions, default: 0, range: 0...PartitionLayout.maximumCount)
    }

    /// The worker's payload shapes: `worker.payload_profile`, `worker.legacy_badge`,
    /// `worker.legacy_extras` (also what `herald preview` shows).
    static func payloadBuilder(_ settings: Settings) throws -> PayloadBuilder {
        PayloadBuilder(
            profile: try settings.choice(.workerPayloadProfile, default: PayloadProfile.legacy),
            legacyBadge: try settings.bool(.workerLegacyBadge, default: false),
            legacyExtras: try settings.bool(.workerLegacyExtras, default: true)
        )
    }

    /// `worker.threads`, or by default what the sender carries at once (its connections ×
    /// streams: 400 for APNs and FCM with their defaults), 64 for a sender without a bound (log,
    /// null).
    static func lanes(_ settings: Settings, sender: any PushSender) throws -> Int {
        try settings.int(.workerThreads, default: sender.concurrency ?? 64, range: 1...100_000)
    }

    static func worker(_ settings: Settings) throws -> WorkerConfiguration {
        var configuration = WorkerConfiguration(amqp: try amqp(settings, connectionName: "herald worker"), topology: try topology(settings))
        configuration.prefetch = UInt16(try settings.int(.amqpPrefetch, default: 300, range: 1...65_535))
        configuration.lanes = try settings.int(.workerThreads, default: 64, range: 1...100_000)
        configuration.shutdownTimeout = try settings.duration(.workerShutdownTimeout, default: .seconds(30))
        configuration.retryPolicy.maxAttempts = try settings.int(.workerMaxAttempts, default: 8, range: 1...1_000)
        configuration.retryPolicy.maxDelay = try settings.duration(.workerMaxRetryDelay, default: .seconds(300))
        configuration.payloadBuilder = try payloadBuilder(settings)
        configuration.broadcastAudienceTTL = try settings.duration(.workerBroadcastCache, default: .seconds(2))
        configuration.broadcastMemoryLimit = try settings.int(.workerBroadcastMemory, default: 100_000, range: 0...100_000_000)
        configuration.broadcastWindow = try settings.int(.workerBroadcastWindow, default: 1_000, range: 1...100_000)
        configuration.partitions = try partitions(settings)
        configuration.backlog = try settings.bool(.workerBacklog, default: true)
        configuration.backlogAfter = try settings.int(.workerBacklogAfter, default: 64, range: 1...100_000)
        configuration.backlogWindow = try settings.int(.workerBacklogWindow, default: 32, range: 1...100_000)
        configuration.backlogMemory = try settings.int(.workerBacklogMemory, default: 8_192, range: 1...10_000_000)
        let failures = try settings.int(.workerCircuitFailures, default: 10, range: 0...1_000_000)
        if failures == 0 {
            configuration.circuitBreaker = .disabled
        } else {
            configuration.circuitBreaker.minimumFailures = failures
            // Waiting in the backlog costs nothing, so a failing provider is probed every few
            // seconds and its deliveries go soon after it answers again; each reopening of the
            // wait queue (no backlog) sends its copies round again, so it waits longer there.
            configuration.circuitBreaker.initialOpen = try settings.duration(.workerCircuitOpen, default: .seconds(2))
            configuration.circuitBreaker.maximumOpen = try settings.duration(
                .workerCircuitMaxOpen, default: configuration.backlog ? .seconds(4) : .seconds(60))
            let slow = try settings.duration(.workerCircuitSlow, default: .seconds(1))
            configuration.circuitBreaker.slowAnswer = slow > .zero ? slow : nil
        }
        return configuration
    }
}

extension RuntimeSettings {
    /// Checks the PEM files a connection URL names (`cacertfile`, `sslrootcert`…): librabbitmq
    /// and libpq read them only when they connect, where a wrong path would look like an
    /// unreachable server. libpq's `sslrootcert=system` is not a file.
    static func checkTLSFiles(_ files: [(parameter: String, path: String?)], key: SettingKey, settings: Settings) throws {
        for case let (parameter, path?) in files where path != "system" {
            do {
                _ = try CredentialFile.readPEM(path, "the \(parameter) file")
            } catch {
                throw ConfigurationError(.invalidFile, key: key.dotted, source: settings.lookup(key)?.source, reason: error.description)
            }
        }
    }

    /// Opens the store of `settings`, runs `body`, closes it. Store errors are printed and turned
    /// into exit status 1 by the caller.
    static func withStore<T>(_ settings: Settings, logger: Logger, _ body: (Store) async throws -> T) async throws -> T {
        let store = try Store(configuration: try store(settings), logger: logger)
        return try await using(store, close: { await $0.close() }, body)
    }

    /// Connects to the broker of `settings`, runs `body`, closes the connection.
    static func withBroker<T>(_ settings: Settings, logger: Logger, name: String, _ body: (AMQPConnection) async throws -> T) async throws -> T {
        let connection = try await AMQPConnection.connect(try amqp(settings, connectionName: name), logger: logger)
        return try await using(connection, close: { await $0.close() }, body)
    }

    /// Runs `body` with `resource`, then closes it, whether `body` returned or threw.
    private static func using<Resource, T>(
        _ resource: Resource, close: (Resource) async -> Void, _ body: (Resource) async throws -> T
    ) async throws -> T {
        do {
            let result = try await body(resource)
            await close(resource)
            return result
        } catch {
            await close(resource)
            throw error
        }
    }
}
