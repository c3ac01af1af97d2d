import Foundation
import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Logging
import Testing

/// A migrated store on a fresh database with the repository's templates (plus the seed
/// sample's), a unique queue layout on the shared broker, and helpers to run a worker against
/// them. Everything is removed afterwards.
struct WorkerFixture: Sendable {
    let store: Store
    let database: TestDatabase
    let topology: HeraldTopology
    /// The main queue and its wait queue (where deferred copies wait): settled together.
    var mainAndWaitQueues: [String] { [topology.queue, topology.queue + ".wait"] }
    let amqpConfiguration: AMQPConfiguration
    /// For publishing and inspecting queues.
    let amqp: AMQPConnection
    let logger: Logger

    static func with<T>(
        extraTemplates: [Template] = TestEvents.seedTemplates(), configureStore: (inout StoreConfiguration) -> Void = { _ in },
        queueType: AMQPQueueType = .classic,
        _ body: (WorkerFixture) async throws -> T
    ) async throws -> T {
        try await TestEnvironment.require(.postgreSQL, .rabbitMQ)
        return try await TestDatabase.with { _, database in
            var storeConfiguration = StoreConfiguration(database: database.configuration)
            storeConfiguration.maintenanceInterval = nil
            storeConfiguration.database.reconnectInitialDelay = .milliseconds(50)
            configureStore(&storeConfiguration)
            let store = try Store(configuration: storeConfiguration)
            let amqpConfiguration: AMQPConfiguration
            let amqp: AMQPConnection
            do {
                try await store.migrate()
                try await store.templates.replaceAll(with: try templates(extra: extraTemplates))
                amqpConfiguration = try AMQPConfiguration(url: TestEnvironment.amqpURL)
                do {
                    amqp = try await AMQPConnection.connect(amqpConfiguration)
                } catch {
                    throw TestEnvironmentError("RabbitMQ at \(TestEnvironment.amqpURL) is unreachable: \(error)")
                }
            } catch {
                await store.close()
                throw error
            }
            let topology = HeraldTopology(
                exchange: TestEnvironment.uniqueName("herald.test.x"), queue: TestEnvironment.uniqueName("herald.test.q"), queueType: queueType
            )
            var logger = Logger(label: "herald.worker.test")
            logger.logLevel = ProcessInfo.processInfo.environment["HERALD_TEST_WORKER_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .error
            let fixture = WorkerFixture(store: store, database: database, topology: topology, amqpConfiguration: amqpConfiguration, amqp: amqp, logger: logger)
            do {
                try await amqp.declare(topology)
                let result = try await body(fixture)
                await fixture.tearDown()
                return result
            } catch {
                await fixture.tearDown()
                throw error
            }
        }
    }

    private func tearDown() async {
        _ = try? await amqp.deleteQueue(topology.queue)
        _ = try? await amqp.deleteQueue(topology.deadLetterQueue)
        _ = try? await amqp.deleteQueue(topology.queue + ".wait")
        try? await amqp.deleteExchange(topology.exchange)
        try? await amqp.deleteExchange(topology.deadLetterExchange)
        await amqp.close()
        await store.close()
    }

    /// The repository's templates plus `extra`.
    static func templates(extra: [Template]) throws -> TemplateCatalog {
        let folder = TestEnvironment.packageRoot.appendingPathComponent("templates")
        var files: [TemplateSource] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        where name.hasSuffix(".resx") || name == EventMetadataFile.fileName {
            let data = try #require(FileManager.default.contents(atPath: folder.appendingPathComponent(name).path))
            files.append(TemplateSource(fileName: name, contents: Array(data)))
        }
        let repository = try TemplateBundle.catalog(files: files, defaultCulture: "ru-RU")
        return try TemplateCatalog(templates: repository.templates + extra, defaultCulture: "ru-RU")
    }

    /// A worker configuration for this fixture: fast backoffs, short shutdown.
    func configuration(lanes: Int = 8, prefetch: UInt16 = 300) -> WorkerConfiguration {
        var configuration = WorkerConfiguration(amqp: amqpConfiguration, topology: topology)
        configuration.lanes = lanes
        configuration.prefetch = prefetch
        configuration.shutdownTimeout = .seconds(10)
        configuration.reconnectInitialDelay = .milliseconds(100)
        configuration.reconnectMaxDelay = .seconds(1)
        configuration.storeRetryInitialDelay = .milliseconds(50)
        configuration.storeRetryMaxDelay = .milliseconds(500)
        configuration.retryPolicy = RetryPolicy(
            initialDelay: .milliseconds(50), maxDelay: .milliseconds(200), jitter: 0, maxAttempts: 6, maxElapsed: .seconds(30))
        configuration.broadcastAudienceTTL = .zero
        return configuration
    }

    /// Runs a worker while `body` runs, then stops it gracefully (bounded) and returns `body`'s value.
    func withWorker<T>(
        sender: any PushSender, configuration: WorkerConfiguration? = nil, _ body: (WorkerService) async throws -> T
    ) async throws -> T {
        let worker = try WorkerService(configuration: configuration ?? self.configuration(), store: store, sender: sender, logger: logger)
        let running = Task { try await worker.run() }
        do {
            try await waitUntil("the worker consumes", timeout: .seconds(20)) { worker.isConsuming }
            let result = try await body(worker)
            worker.stop()
            try await Self.join(running)
            return result
        } catch {
            worker.stop()
            try? await Self.join(running)
            throw error
        }
    }

    /// Waits for a worker task to end, at most 30 s (then cancels it).
    static func join(_ task: Task<Void, any Error>) async throws {
        let timeout = Task {
            try await Task.sleep(for: .seconds(30))
            task.cancel()
        }
        _ = await task.result
        timeout.cancel()
    }

    func publish(_ body: Data, messageID: String? = nil, headers: AMQPTable = [:], contentType: String? = "application/xml") async throws {
        try await amqp.publish(message(body, messageID: messageID, headers: headers, contentType: contentType))
    }

    func publish(_ bodies: [Data]) async throws {
        for start in stride(from: 0, to: bodies.count, by: 1_000) {
            try await amqp.publishBatch(bodies[start..<min(bodies.count, start + 1_000)].map { message($0) })
        }
    }

    func message(_ body: Data, messageID: String? = nil, headers: AMQPTable = [:], contentType: String? = "application/xml") -> AMQPOutgoingMessage {
        AMQPOutgoingMessage(
            exchange: topology.exchange, routingKey: topology.routingKey, body: body,
            properties: AMQPProperties(contentType: contentType, headers: headers, messageID: messageID), mandatory: true
        )
    }

    /// Waits until `queues` (the main queue by default) and the backlog are empty, every broadcast
    /// sent in windows is done, and every one
    /// of `workers` consumes and holds no message, on three polls in a row (a message requeued by
    /// a lost connection may still be on its way back).
    func waitUntilSettled(_ workers: WorkerService..., queues: [String]? = nil, timeout: Duration = .seconds(30)) async throws {
        let queues = queues ?? [topology.queue]
        var quiet = 0
        try await waitUntil("every queue is empty and nothing is in flight", timeout: timeout) {
            var empty = true
            for queue in queues where (try? await depth(queue)) != 0 { empty = false }
            if empty, (try? await store.backlog.count()) != 0 { empty = false }
            if empty, (try? await store.broadcasts.unfinishedCount()) != 0 { empty = false }
            let idle = empty && workers.allSatisfy { $0.isConsuming && $0.statistics.messagesInFlight == 0 }
            quiet = idle ? quiet + 1 : 0
            if quiet < 3 { try await Task.sleep(for: .milliseconds(100)) }
            return quiet >= 3
        }
    }

    func depth(_ queue: String) async throws -> Int {
        Int(try await amqp.queueState(queue).messageCount)
    }
}
