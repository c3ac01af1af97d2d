import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Logging
import Testing

/// A broker restart and a database restart during a run: the worker recovers and finishes the
/// run. Uses a private RabbitMQ and PostgreSQL (deploy/local/ctl.sh), never the shared ones.
@Suite("Restarts", .timeLimit(.minutes(4)))
struct RestartTests {
    @Test func theWorkerRecoversFromABrokerRestartAndADatabaseRestart() async throws {
        let stack = try await PrivateStack.start()
        do {
            try await run(stack: stack)
        } catch {
            await stack.shutdown()
            throw error
        }
        await stack.shutdown()
    }

    private func run(stack: PrivateStack) async throws {
        var storeConfiguration = try StoreConfiguration(databaseURL: stack.databaseURL, poolSize: 4)
        storeConfiguration.maintenanceInterval = nil
        storeConfiguration.database.reconnectInitialDelay = .milliseconds(100)
        storeConfiguration.database.reconnectMaxDelay = .milliseconds(500)
        let store = try Store(configuration: storeConfiguration)
        do {
            try await run(stack: stack, store: store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    private func run(stack: PrivateStack, store: Store) async throws {
        try await store.migrate()
        try await store.templates.replaceAll(with: try WorkerFixture.templates(extra: []))
        let users = 40
        let messages = 1_200
        try await store.devices.importDevices((0..<users).map { TestEvents.device("d\($0)", user: "u\($0)") })
        let amqpConfiguration = try AMQPConfiguration(url: stack.amqpURL)
        let topology = HeraldTopology(queue: "herald.restart")
        let publisher = try await AMQPConnection.connect(amqpConfiguration)
        try await publisher.declare(topology)
        try await publisher.publishBatch(
            (0..<messages).map {
                AMQPOutgoingMessage(
                    exchange: topology.exchange, routingKey: topology.routingKey,
                    body: TestEvents.xml(users: ["u\($0 % users)"], parameters: ["\($0)"], sequence: $0),
                    properties: AMQPProperties(contentType: "application/xml")
                )
            })
        await publisher.close()

        var configuration = WorkerConfiguration(amqp: amqpConfiguration, topology: topology)
        configuration.lanes = 4
        configuration.amqp.heartbeat = .seconds(2)
        configuration.reconnectInitialDelay = .milliseconds(200)
        configuration.reconnectMaxDelay = .seconds(1)
        configuration.storeRetryInitialDelay = .milliseconds(100)
        configuration.storeRetryMaxDelay = .milliseconds(500)
        configuration.shutdownTimeout = .seconds(10)
        // A slow provider, so that the run lasts through both restarts.
        let sender = RecordingSender(delay: .milliseconds(10))
        var logger = Logger(label: "herald.worker.restart")
        logger.logLevel = .error
        let worker = try WorkerService(configuration: configuration, store: store, sender: sender, logger: logger)
        let running = Task { try await worker.run() }
        defer { worker.stop() }

        try await waitUntil("a first part of the run", timeout: .seconds(60)) { sender.count >= 200 }
        try await stack.restart("rabbitmq")
        try await waitUntil("deliveries after the broker restart", timeout: .seconds(90)) {
            worker.statistics.connections >= 2 && sender.count >= 600
        }
        try await stack.restart("postgres")
        try await waitUntil("every delivery", timeout: .seconds(120)) { Set(sender.sent.map(\.key)).count >= messages }
        try await waitUntil("every message acknowledged", timeout: .seconds(60)) {
            worker.statistics.messagesInFlight == 0 && worker.isConsuming
        }
        worker.stop()
        try await WorkerFixture.join(running)

        let sent = sender.sent
        let sequences = Set(sent.compactMap(OrderingTests.sequence))
        #expect(sequences == Set(0..<messages), "every message delivered after both restarts")
        #expect(worker.statistics.connections >= 2)
        let check = try await AMQPConnection.connect(amqpConfiguration)
        #expect(try await check.queueState(topology.queue).messageCount == 0)
        await check.close()
    }
}
