import Foundation
import HeraldAMQP
import HeraldTesting
import Synchronization
import Testing

/// A lost connection must give typed errors, never a crash or a hang, and a new connection must
/// work afterwards. The connection is cut with a TCP proxy (or by the broker itself), never by
/// stopping the shared broker.
@Suite("Connection loss", .requires(.rabbitMQ))
struct ConnectionLossTests {
    @Test(.timeLimit(.minutes(1)))
    func severingMidConsumeEndsTheStreamWithConnectionLost() async throws {
        let broker = try AMQPTestSupport.brokerAddress()
        let proxy = try await TCPProxy.start(targetHost: broker.host, targetPort: broker.port)
        let queue = AMQPTestSupport.uniqueQueue("sever-consume")
        try await withCleanup(queues: [queue]) {
            // Fill the queue over a direct connection.
            let direct = try await AMQPTestSupport.connect(name: "sever-consume-filler")
            try await direct.declareQueue(AMQPQueue(name: queue))
            try await direct.publishBatch((0..<200).map { AMQPOutgoingMessage(routingKey: queue, body: AMQPTestSupport.body(sequence: $0)) })

            let connection = try await AMQPConnection.connect(try AMQPTestSupport.configuration(through: proxy, name: "sever-consume"))
            let consumer = try await connection.consume(queue: queue, prefetch: 10)
            let start = Mutex<ContinuousClock.Instant?>(nil)
            let outcome = try await withTimeout(.seconds(15), "the consumer to notice the cut") { () async -> (Int, AMQPError?) in
                var received = 0
                do {
                    for try await delivery in consumer {
                        received += 1
                        try consumer.ack(delivery.deliveryTag)
                        if received == 20 {
                            start.withLock { $0 = .now }
                            await proxy.severAll()
                        }
                    }
                    return (received, nil)
                } catch {
                    return (received, error as? AMQPError)
                }
            }
            let noticed = ContinuousClock.now - (start.withLock { $0 } ?? .now)
            let error = try #require(outcome.1, "the stream must throw, not end normally")
            #expect(error.code == .connectionLost)
            #expect(error.endsConnection)
            #expect(noticed < .seconds(5))
            #expect(!connection.isOpen)
            #expect(await connection.waitUntilClosed()?.code == .connectionLost)

            // Calls on the dead connection fail at once with a typed error.
            do {
                try await connection.publish(Data("late".utf8), routingKey: queue)
                Issue.record("publishing on a lost connection must fail")
            } catch {
                let error = try #require(asAMQPError(error))
                #expect(error.code == .connectionLost)
            }
            #expect(throws: AMQPError.self) { try consumer.ack(1) }

            // Re-establish: a new connection through the same proxy works, and nothing was lost:
            // unacknowledged deliveries went back to the queue (acks sent just before the cut may
            // or may not have reached the broker).
            let again = try await AMQPConnection.connect(try AMQPTestSupport.configuration(through: proxy, name: "sever-consume-again"))
            let released = try await AMQPTestSupport.eventually { try await again.queueState(queue).consumerCount == 0 }
            #expect(released)
            let remaining = Int(try await again.queueState(queue).messageCount)
            #expect((200 - outcome.0)...200 ~= remaining, "remaining \(remaining) after \(outcome.0) received")
            await again.close()
            await direct.close()
        }
        try await proxy.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func severingMidPublishFailsEveryPendingPublish() async throws {
        let broker = try AMQPTestSupport.brokerAddress()
        let proxy = try await TCPProxy.start(targetHost: broker.host, targetPort: broker.port)
        let queue = AMQPTestSupport.uniqueQueue("sever-publish")
        try await withCleanup(queues: [queue]) {
            let connection = try await AMQPConnection.connect(try AMQPTestSupport.configuration(through: proxy, name: "sever-publish"))
            try await connection.declareQueue(AMQPQueue(name: queue))
            let total = 50_000
            let probe = try await AMQPTestSupport.connect(name: "sever-publish-probe")
            let body = AMQPTestSupport.body(sequence: 0)
            let batch = Task { () -> AMQPError? in
                do {
                    try await connection.publishBatch((0..<total).map { _ in AMQPOutgoingMessage(routingKey: queue, body: body) })
                    return nil
                } catch {
                    return asAMQPError(error)
                }
            }
            let singles = (0..<20).map { index in
                Task { () -> AMQPError? in
                    do {
                        try await connection.publish(AMQPTestSupport.body(sequence: index), routingKey: queue)
                        return nil
                    } catch {
                        return asAMQPError(error)
                    }
                }
            }
            // Cut once some messages are through and many are still pending.
            let started = try await AMQPTestSupport.eventually(within: .seconds(20)) {
                try await probe.queueState(queue).messageCount > 1_000
            }
            #expect(started)
            let cut = ContinuousClock.now
            await proxy.severAll()

            let batchError = try await withTimeout(.seconds(10), "the batch to fail") { await batch.value }
            let error = try #require(batchError, "a batch cut short must throw")
            #expect(error.code == .connectionLost)
            #expect(!error.failedMessageIndices.isEmpty)
            #expect(error.failedMessageIndices.count < total)
            #expect(ContinuousClock.now - cut < .seconds(5))
            for single in singles {
                let outcome = try await withTimeout(.seconds(5), "a single publish to finish") { await single.value }
                if let outcome { #expect(outcome.code == .connectionLost) }
            }
            #expect(await connection.waitUntilClosed()?.code == .connectionLost)

            let again = try await AMQPConnection.connect(try AMQPTestSupport.configuration(through: proxy, name: "sever-publish-again"))
            try await again.publish(Data("after".utf8), routingKey: queue)
            // Every confirmed message is in the queue.
            #expect(try await again.queueState(queue).messageCount >= UInt32(total - error.failedMessageIndices.count))
            await again.close()
            await probe.close()
        }
        try await proxy.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func brokerForcedCloseIsConnectionLost() async throws {
        let name = TestEnvironment.uniqueName("herald-forced-close")
        let queue = AMQPTestSupport.uniqueQueue("forced")
        try await withCleanup(queues: [queue]) {
            let connection = try await AMQPTestSupport.connect(name: name)
            try await connection.declareQueue(AMQPQueue(name: queue))
            let consumer = try await connection.consume(queue: queue, prefetch: 5)
            let iteration = Task { () -> AMQPError? in
                do {
                    for try await delivery in consumer { try consumer.ack(delivery.deliveryTag) }
                    return nil
                } catch {
                    return asAMQPError(error)
                }
            }
            try await RabbitMQControl.closeConnection(named: name, reason: "herald test forced close")
            let outcome = try await withTimeout(.seconds(15), "the consumer to see the forced close") { await iteration.value }
            let error = try #require(outcome)
            #expect(error.code == .connectionLost)
            #expect(error.replyCode == 320)
            #expect(error.message.contains("herald test forced close"))
            #expect(!connection.isOpen)

            let again = try await AMQPTestSupport.connect(name: name + "-again")
            #expect(try await again.queueState(queue).consumerCount == 0)
            await again.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func heartbeatsKeepAnIdleConnectionAliveAndDetectASilentPeer() async throws {
        let broker = try AMQPTestSupport.brokerAddress()
        let proxy = try await TCPProxy.start(targetHost: broker.host, targetPort: broker.port)
        var configuration = try AMQPTestSupport.configuration(through: proxy, name: "heartbeat")
        configuration.heartbeat = .seconds(1)
        let connection = try await AMQPConnection.connect(configuration)

        // Idle for several heartbeat intervals: the thread keeps heartbeats going.
        try await Task.sleep(for: .milliseconds(3_500))
        #expect(connection.isOpen)
        let scratch = try await connection.declareQueue(AMQPQueue(name: "", durable: false, exclusive: true, autoDelete: true))
        #expect(scratch.name.hasPrefix("amq.gen-"))

        // A silent link (nothing forwarded, nothing closed) is noticed by the missed heartbeats.
        let paused = ContinuousClock.now
        await proxy.pauseAll()
        let error = try await withTimeout(.seconds(15), "the silent peer to be noticed") { await connection.waitUntilClosed() }
        #expect(error?.code == .connectionLost)
        #expect(ContinuousClock.now - paused < .seconds(6))
        try await proxy.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func closeIsGracefulAndIdempotent() async throws {
        let queue = AMQPTestSupport.uniqueQueue("close")
        try await withCleanup(queues: [queue]) {
            let connection = try await AMQPTestSupport.connect(name: "close-test")
            try await connection.declareQueue(AMQPQueue(name: queue))
            let consumer = try await connection.consume(queue: queue, prefetch: 5)
            let iteration = Task { () -> Result<Int, any Error> in
                do {
                    var count = 0
                    for try await _ in consumer { count += 1 }
                    return .success(count)
                } catch {
                    return .failure(error)
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            try await withTimeout(.seconds(10), "closing twice at once") {
                async let first: Void = connection.close()
                async let second: Void = connection.close()
                _ = await (first, second)
            }
            await connection.close()
            let result = try await withTimeout(.seconds(5), "the consumer to end") { await iteration.value }
            #expect(throws: Never.self) { try result.get() }
            #expect(!connection.isOpen)
            #expect(await connection.waitUntilClosed() == nil)
            do {
                _ = try await connection.queueState(queue)
                Issue.record("calls after close must fail")
            } catch {
                let error = try #require(asAMQPError(error))
                #expect(error.code == .connectionClosed)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func connectFailuresAreTyped() async throws {
        var unreachable = try AMQPTestSupport.configuration()
        unreachable.port = 1  // nothing listens there
        let closedPort = unreachable
        do {
            _ = try await withTimeout(.seconds(10), "the failed connect") { try await AMQPConnection.connect(closedPort) }
            Issue.record("connecting to a closed port must fail")
        } catch {
            let error = try #require(asAMQPError(error))
            #expect(error.code == .connectionFailed)
        }
        var wrong = try AMQPTestSupport.configuration()
        wrong.password = "definitely-wrong"
        let wrongPassword = wrong
        do {
            _ = try await withTimeout(.seconds(10), "the refused login") { try await AMQPConnection.connect(wrongPassword) }
            Issue.record("a wrong password must fail")
        } catch {
            let error = try #require(asAMQPError(error))
            #expect(error.code == .authenticationFailed)
            #expect(!error.description.contains("definitely-wrong"))
        }
        // TLS against the plain AMQP port: the handshake fails, as a typed error.
        var tls = try AMQPTestSupport.configuration()
        tls.tls = AMQPTLSConfiguration(verifyPeer: false, verifyHostname: false)
        let plainPortOverTLS = tls
        do {
            _ = try await withTimeout(.seconds(15), "the failed TLS handshake") { try await AMQPConnection.connect(plainPortOverTLS) }
            Issue.record("TLS to a plain port must fail")
        } catch {
            let error = try #require(asAMQPError(error))
            #expect([.tlsFailed, .connectionFailed, .timeout].contains(error.code), "\(error)")
        }
    }
}

/// `rabbitmqctl` of the local test broker (deploy/local/up.sh), for broker-side actions on a
/// single connection. Runs with the environment the local stack scripts give it.
enum RabbitMQControl {
    static let executable = "/usr/lib/rabbitmq/bin/rabbitmqctl"

    static func run(_ arguments: [String], timeout: Duration = .seconds(45)) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-n", "rabbit@localhost"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = environment["HERALD_TEST_RABBITMQ_HOME"] ?? "/tmp/herald-local/rabbitmq"
        environment["ERL_EPMD_ADDRESS"] = "127.0.0.1"
        environment["RABBITMQ_NODENAME"] = "rabbit@localhost"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let reader = output.fileHandleForReading
        let data: Data
        do {
            data = try await withTimeout(timeout, "rabbitmqctl \(arguments.first ?? "")") {
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async { continuation.resume(returning: reader.readDataToEndOfFile()) }
                }
            }
        } catch {
            process.terminate()
            throw error
        }
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw ControlError(message: "rabbitmqctl \(arguments.first ?? "") failed (status \(process.terminationStatus)): \(text.prefix(2000))")
        }
        return text
    }

    /// Closes the broker-side connection whose `connection_name` client property is `name`.
    static func closeConnection(named name: String, reason: String) async throws {
        let listing = try await run(["list_connections", "pid", "client_properties", "--no-table-headers", "--quiet"])
        guard let line = listing.split(separator: "\n").first(where: { $0.contains("\"\(name)\"") }),
            let pid = line.split(separator: "\t").first
        else {
            throw ControlError(message: "no broker connection named \(name) in the listing")
        }
        // close_connection takes the connection's Erlang pid, e.g. <rabbit@localhost.1700000000.1234.0>.
        _ = try await run(["close_connection", String(pid), reason])
    }

    struct ControlError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
