import Foundation
import HeraldAMQP
import HeraldTesting
import Testing

@Suite("Dead letters and publish failures", .requires(.rabbitMQ))
struct DeadLetterTests {
    @Test(.timeLimit(.minutes(1)))
    func nackWithoutRequeueLandsInTheDeadLetterQueue() async throws {
        let topology = HeraldTopology(
            exchange: TestEnvironment.uniqueName("herald.test.amqp.exchange"),
            queue: AMQPTestSupport.uniqueQueue("dlx")
        )
        #expect(topology.deadLetterExchange == topology.queue + ".dlx")
        #expect(topology.deadLetterQueue == topology.queue + ".dead")
        let connection = try await AMQPTestSupport.connect(name: "dlx-test")
        try await withCleanup(
            queues: [topology.queue, topology.deadLetterQueue],
            exchanges: [topology.exchange, topology.deadLetterExchange]
        ) {
            #expect(try await connection.declare(topology).isEmpty)
            // Declaring the same layout again is a no-op without warnings.
            #expect(try await connection.declare(topology).isEmpty)

            let headers: AMQPTable = [
                "AvoidDublication": true,
                "x-herald-error": "template missing",
                "attempt": 3,
                "score": 0.5,
                "at": .timestamp(Date(timeIntervalSince1970: 1_700_000_123)),
                "meta": ["tags": ["a", "b"], "flag": false],
            ]
            let body = Data("<event id=\"42\"/>".utf8)
            try await connection.publish(
                body,
                exchange: topology.exchange,
                routingKey: topology.routingKey,
                properties: AMQPProperties(contentType: "text/xml", headers: headers, messageID: "evt-42")
            )

            let consumer = try await connection.consume(queue: topology.queue, prefetch: 1)
            let delivery = try await withTimeout(.seconds(10), "the delivery") { () async throws -> AMQPDelivery? in
                for try await delivery in consumer { return delivery }
                return nil
            }
            let received = try #require(delivery)
            #expect(received.body == body)
            #expect(received.properties.headers == headers)
            #expect(received.properties.deathRecords.isEmpty)
            try consumer.nack(received.deliveryTag, requeue: false)

            let deadLetter = try await withTimeout(.seconds(10), "the dead letter") { () async throws -> AMQPDelivery? in
                while true {
                    if let message = try await connection.get(queue: topology.deadLetterQueue) { return message }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            let dead = try #require(deadLetter)
            #expect(dead.body == body)
            #expect(dead.properties.messageID == "evt-42")
            #expect(dead.properties.contentType == "text/xml")
            for (key, value) in headers { #expect(dead.properties.headers[key] == value, "header \(key)") }
            let death = try #require(dead.properties.deathRecords.first)
            #expect(death.queue == topology.queue)
            #expect(death.reason == "rejected")
            #expect(death.count == 1)
            #expect(death.exchange == topology.exchange)
            #expect(death.routingKeys == [topology.routingKey])
            #expect(death.time != nil)
            #expect(dead.routingKey == topology.deadLetterRoutingKey)
            try connection.ack(dead)
            await connection.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func mandatoryUnroutablePublishFails() async throws {
        let exchange = TestEnvironment.uniqueName("herald.test.amqp.unroutable")
        let queue = AMQPTestSupport.uniqueQueue("routable")
        let connection = try await AMQPTestSupport.connect(name: "unroutable-test")
        try await withCleanup(queues: [queue], exchanges: [exchange]) {
            try await connection.declareExchange(AMQPExchange(name: exchange, type: .direct, durable: false, autoDelete: false))
            try await connection.declareQueue(AMQPQueue(name: queue))
            try await connection.bindQueue(AMQPBinding(queue: queue, exchange: exchange, routingKey: "bound"))

            let routed = AMQPOutgoingMessage(exchange: exchange, routingKey: "bound", body: Data("r".utf8), mandatory: true)
            let unroutable = AMQPOutgoingMessage(exchange: exchange, routingKey: "nowhere", body: Data("u".utf8), mandatory: true)
            try await connection.publish(routed)
            do {
                try await connection.publish(unroutable)
                Issue.record("an unroutable mandatory publish must fail")
            } catch {
                let error = try #require(asAMQPError(error))
                #expect(error.code == .unroutable)
                #expect(error.replyCode == 312)
            }
            // In a batch only the unroutable ones are reported.
            do {
                try await connection.publishBatch([routed, unroutable, routed, unroutable])
                Issue.record("the batch must report the unroutable messages")
            } catch {
                let error = try #require(asAMQPError(error))
                #expect(error.code == .unroutable)
                #expect(error.failedMessageIndices == [1, 3])
            }
            // Without mandatory the broker drops it silently and confirms.
            try await connection.publish(Data("x".utf8), exchange: exchange, routingKey: "nowhere")
            #expect(try await connection.queueState(queue).messageCount == 3)
            await connection.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func publishToAMissingExchangeFailsAndPublishingRecovers() async throws {
        let queue = AMQPTestSupport.uniqueQueue("recover")
        let connection = try await AMQPTestSupport.connect(name: "missing-exchange-test")
        try await withCleanup(queues: [queue]) {
            try await connection.declareQueue(AMQPQueue(name: queue))
            do {
                try await connection.publish(Data("x".utf8), exchange: "herald.test.no-such-exchange", routingKey: "k")
                Issue.record("publishing to a missing exchange must fail")
            } catch {
                let error = try #require(asAMQPError(error))
                #expect(error.code == .notFound)
                #expect(error.replyCode == 404)
                #expect(!error.endsConnection)
            }
            try await connection.publish(Data("y".utf8), routingKey: queue)
            #expect(try await connection.queueState(queue).messageCount == 1)
            #expect(connection.isOpen)
            await connection.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func oversizedNamesAreRefusedWithoutHarmingTheConnection() async throws {
        let queue = AMQPTestSupport.uniqueQueue("limits")
        let connection = try await AMQPTestSupport.connect(name: "limits-test")
        try await withCleanup(queues: [queue]) {
            try await connection.declareQueue(AMQPQueue(name: queue))
            let long = String(repeating: "k", count: 300)
            let attempts: [(String, @Sendable () async throws -> Void)] = [
                ("routing key", { try await connection.publish(Data("x".utf8), routingKey: long) }),
                (
                    "header key",
                    {
                        try await connection.publish(
                            Data("x".utf8),
                            routingKey: queue,
                            properties: AMQPProperties(headers: [String(repeating: "h", count: 200): true])
                        )
                    }
                ),
                (
                    "message id",
                    {
                        try await connection.publish(Data("x".utf8), routingKey: queue, properties: AMQPProperties(messageID: long))
                    }
                ),
                ("queue name", { try await connection.declareQueue(AMQPQueue(name: long)) }),
                ("consume", { _ = try await connection.consume(queue: long) }),
            ]
            for (what, attempt) in attempts {
                do {
                    try await attempt()
                    Issue.record("an oversized \(what) must be refused")
                } catch {
                    #expect(asAMQPError(error)?.code == .invalidArgument, "\(what)")
                }
            }
            #expect(connection.isOpen)
            try await connection.publish(Data("fine".utf8), routingKey: queue)
            #expect(try await connection.queueState(queue).messageCount == 1)
            await connection.close()
        }
    }
}
