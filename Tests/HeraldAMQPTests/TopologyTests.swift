import Foundation
import HeraldAMQP
import HeraldTesting
import Testing

@Suite("Topology, queue utilities and quorum queues", .requires(.rabbitMQ))
struct TopologyTests {
    @Test(.timeLimit(.minutes(1)))
    func redeclaringWithOtherArgumentsWarnsAndTheQueueStillWorks() async throws {
        let queue = AMQPTestSupport.uniqueQueue("mismatch")
        let connection = try await AMQPTestSupport.connect(name: "mismatch-test")
        try await withCleanup(queues: [queue]) {
            let first = try await connection.declareQueue(AMQPQueue(name: queue, type: .classic, maxPriority: 5))
            #expect(first.warning == nil)
            #expect(first.name == queue)

            let second = try await connection.declareQueue(
                AMQPQueue(name: queue, type: .quorum, deadLetterExchange: "elsewhere")
            )
            let warning = try #require(second.warning)
            #expect(warning.kind == .queue)
            #expect(warning.name == queue)
            #expect(warning.brokerMessage.contains("PRECONDITION_FAILED"))
            #expect(second.messageCount == 0)

            // The connection and the existing queue keep working.
            try await connection.publish(Data("still works".utf8), routingKey: queue)
            let consumer = try await connection.consume(queue: queue, prefetch: 5)
            let delivery = try await withTimeout(.seconds(10), "the delivery") { () async throws -> AMQPDelivery? in
                for try await delivery in consumer { return delivery }
                return nil
            }
            #expect(delivery?.body == Data("still works".utf8))
            if let delivery { try consumer.ack(delivery.deliveryTag) }
            try await consumer.cancel()
            await connection.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func heraldTopologyWithAnotherQueueTypeWarns() async throws {
        let queue = AMQPTestSupport.uniqueQueue("layout")
        let exchange = TestEnvironment.uniqueName("herald.test.amqp.layout")
        let classic = HeraldTopology(exchange: exchange, queue: queue, queueType: .classic)
        var quorum = classic
        quorum.queueType = .quorum
        let connection = try await AMQPTestSupport.connect(name: "layout-test")
        try await withCleanup(queues: [queue, classic.deadLetterQueue], exchanges: [exchange, classic.deadLetterExchange]) {
            #expect(try await connection.declare(classic).isEmpty)
            let warnings = try await connection.declare(quorum)
            #expect(Set(warnings.map(\.name)) == [queue, classic.deadLetterQueue])
            #expect(warnings.allSatisfy { $0.kind == .queue })
            await connection.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func depthGetPurgeAndDelete() async throws {
        let queue = AMQPTestSupport.uniqueQueue("utilities")
        let connection = try await AMQPTestSupport.connect(name: "utilities-test")
        try await withCleanup(queues: [queue]) {
            try await connection.declareQueue(AMQPQueue(name: queue))
            try await connection.publishBatch(
                (0..<5).map { AMQPOutgoingMessage(routingKey: queue, body: AMQPTestSupport.body(sequence: $0, size: 16)) }
            )
            let state = try await connection.queueState(queue)
            #expect(state.messageCount == 5)
            #expect(state.consumerCount == 0)

            let first = try #require(try await connection.get(queue: queue))
            #expect(AMQPTestSupport.sequence(of: first.body) == 0)
            #expect(first.messageCount == 4)
            try connection.ack(first)
            // A second settlement of the same delivery is dropped, not sent (it would close the channel).
            try connection.ack(first)

            let second = try #require(try await connection.get(queue: queue))
            #expect(AMQPTestSupport.sequence(of: second.body) == 1)
            try connection.reject(second, requeue: true)

            // RabbitMQ puts a requeued message back in its place, at the head.
            let third = try #require(try await connection.get(queue: queue, autoAck: true))
            #expect(AMQPTestSupport.sequence(of: third.body) == 1)
            #expect(third.redelivered)

            #expect(try await connection.purgeQueue(queue) == 3)  // 2, 3, 4
            #expect(try await connection.get(queue: queue) == nil)
            #expect(try await connection.deleteQueue(queue) == 0)

            do {
                _ = try await connection.queueState(queue)
                Issue.record("a deleted queue must not be found")
            } catch {
                let error = try #require(asAMQPError(error))
                #expect(error.code == .notFound)
                #expect(error.replyCode == 404)
            }
            // The control channel was reopened: the connection is still usable.
            try await connection.declareQueue(AMQPQueue(name: queue))
            #expect(try await connection.queueState(queue).messageCount == 0)
            await connection.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func quorumQueuePublishAndConsume() async throws {
        let queue = AMQPTestSupport.uniqueQueue("quorum")
        let connection = try await AMQPTestSupport.connect(name: "quorum-test")
        try await withCleanup(queues: [queue]) {
            let declared = try await connection.declareQueue(
                AMQPQueue(name: queue, type: .quorum, singleActiveConsumer: true, arguments: ["x-delivery-limit": 5])
            )
            #expect(declared.warning == nil)
            let total = 500
            try await connection.publishBatch(
                (0..<total).map { AMQPOutgoingMessage(routingKey: queue, body: AMQPTestSupport.body(sequence: $0)) }
            )
            let consumer = try await connection.consume(queue: queue, prefetch: 50)
            let sequences = try await withTimeout(.seconds(20), "consuming the quorum queue") {
                var sequences: [Int] = []
                for try await delivery in consumer {
                    sequences.append(AMQPTestSupport.sequence(of: delivery.body))
                    try consumer.ack(delivery.deliveryTag)
                    if sequences.count == total { break }
                }
                return sequences
            }
            #expect(sequences == Array(0..<total))
            let drained = try await AMQPTestSupport.eventually { try await connection.queueState(queue).messageCount == 0 }
            #expect(drained)
            await connection.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func gracefulCancelStillDeliversInFlightAndTakesTheirAcks() async throws {
        let queue = AMQPTestSupport.uniqueQueue("cancel")
        let connection = try await AMQPTestSupport.connect(name: "cancel-test")
        try await withCleanup(queues: [queue]) {
            try await connection.declareQueue(AMQPQueue(name: queue))
            let total = 100
            try await connection.publishBatch(
                (0..<total).map { AMQPOutgoingMessage(routingKey: queue, body: AMQPTestSupport.body(sequence: $0, size: 16)) }
            )
            let consumer = try await connection.consume(queue: queue, prefetch: 10)
            let received = try await withTimeout(.seconds(10), "the cancelled consumer to end") {
                var held: [AMQPDelivery] = []
                for try await delivery in consumer {
                    held.append(delivery)
                    if held.count == 3 { try await consumer.cancel() }
                }
                // The sequence ended after cancel; acks still go out.
                for delivery in held { try consumer.ack(delivery.deliveryTag) }
                return held.count
            }
            #expect(received >= 3)
            #expect(received <= 10)  // prefetch bounds what was in flight
            let settled = try await AMQPTestSupport.eventually {
                let state = try await connection.queueState(queue)
                return state.messageCount == UInt32(total - received) && state.consumerCount == 0
            }
            #expect(settled)
            await connection.close()
            // Had an ack been lost, closing would have requeued its message.
            let checker = try await AMQPTestSupport.connect(name: "cancel-test-check")
            #expect(try await checker.queueState(queue).messageCount == UInt32(total - received))
            await checker.close()
        }
    }
}
