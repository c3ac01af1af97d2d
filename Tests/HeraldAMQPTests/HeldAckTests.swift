import Foundation
import HeraldAMQP
import HeraldTesting
import Testing

/// An ack settled ahead of an older delivery waits for the multiple ack that would cover it
/// (fewer ack frames for the broker), but never longer than its bound (150 ms of the older one
/// being the oldest, then 20 ms), and never where a later nack could reach it.
@Suite("Held acks", .requires(.rabbitMQ))
struct HeldAckTests {
    /// Fills `queue` with `count` messages and consumes them all (nothing acked yet).
    private func consumeAll(_ count: Int, from queue: String, on connection: AMQPConnection) async throws -> (AMQPConsumer, [AMQPDelivery]) {
        try await connection.declareQueue(AMQPQueue(name: queue))
        try await connection.publishBatch((0..<count).map { AMQPOutgoingMessage(routingKey: queue, body: AMQPTestSupport.body(sequence: $0)) })
        let consumer = try await connection.consume(queue: queue, prefetch: 10)
        let deliveries = try await withTimeout(.seconds(10), "\(count) deliveries") {
            var iterator = consumer.makeAsyncIterator()
            var taken: [AMQPDelivery] = []
            while taken.count < count { taken.append(try #require(try await iterator.next())) }
            return taken
        }
        return (consumer, deliveries)
    }

    @Test(.timeLimit(.minutes(1)))
    func aHeldAckReachesTheBrokerWithinItsBound() async throws {
        let broker = try AMQPTestSupport.brokerAddress()
        let proxy = try await TCPProxy.start(targetHost: broker.host, targetPort: broker.port)
        let queue = AMQPTestSupport.uniqueQueue("held-ack")
        try await withCleanup(queues: [queue]) {
            let connection = try await AMQPConnection.connect(try AMQPTestSupport.configuration(through: proxy, name: "held-ack"))
            let (consumer, deliveries) = try await consumeAll(3, from: queue, on: connection)
            // The newest is acked while the two older ones are outstanding: held, then sent alone.
            try consumer.ack(deliveries[2].deliveryTag)
            try await Task.sleep(for: .milliseconds(500))
            // Cut the connection without any goodbye: the broker requeues what it saw unacked.
            await proxy.severAll()
            _ = await connection.waitUntilClosed()
            let direct = try await AMQPTestSupport.connect(name: "held-ack-check")
            #expect(
                try await AMQPTestSupport.eventually { try await direct.queueState(queue).messageCount == 2 },
                "the two unacked messages back in the queue, the acked one gone")
            #expect(try await direct.queueState(queue).messageCount == 2)
            await direct.close()
            try await proxy.shutdown()
        }
    }

    /// Acks handed over in one call settle exactly their deliveries, the held ones included.
    @Test(.timeLimit(.minutes(1)))
    func aBatchOfAcksSettlesExactlyItsDeliveries() async throws {
        let queue = AMQPTestSupport.uniqueQueue("batch-ack")
        let connection = try await AMQPTestSupport.connect(name: "batch-ack")
        try await withCleanup(queues: [queue]) {
            let (consumer, deliveries) = try await consumeAll(5, from: queue, on: connection)
            try connection.ack([deliveries[0], deliveries[2], deliveries[3]])
            try connection.ack([AMQPDelivery]())
            try await consumer.cancel()
            await connection.close()
            let direct = try await AMQPTestSupport.connect(name: "batch-ack-check")
            #expect(try await AMQPTestSupport.eventually { try await direct.queueState(queue).messageCount == 2 })
            let requeued = try await [direct.get(queue: queue, autoAck: true), direct.get(queue: queue, autoAck: true)]
            #expect(requeued.map { $0?.body } == [deliveries[1].body, deliveries[4].body], "the two not in the batch came back")
            await direct.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aMultipleNackNeverReachesAHeldAck() async throws {
        let queue = AMQPTestSupport.uniqueQueue("held-nack")
        let connection = try await AMQPTestSupport.connect(name: "held-nack")
        try await withCleanup(queues: [queue]) {
            let (consumer, deliveries) = try await consumeAll(3, from: queue, on: connection)
            // The second is acked (held: the first is outstanding), then a multiple nack through the
            // third requeues the first and the third only.
            try consumer.ack(deliveries[1].deliveryTag)
            try consumer.nack(deliveries[2].deliveryTag, multiple: true, requeue: true)
            try await consumer.cancel()
            await connection.close()
            let direct = try await AMQPTestSupport.connect(name: "held-nack-check")
            #expect(try await AMQPTestSupport.eventually { try await direct.queueState(queue).messageCount == 2 })
            #expect(try await direct.queueState(queue).messageCount == 2, "the acked second message was not requeued")
            await direct.close()
        }
    }
}
