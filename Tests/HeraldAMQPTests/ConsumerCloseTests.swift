import Foundation
import HeraldAMQP
import HeraldTesting
import Testing

/// ``AMQPConsumer/close()``, the handover of a single-active-consumer queue: the acks made before
/// it go out, the rest returns to the queue at its places, and the standby consumer receives it
/// next, in order, nothing twice.
@Suite("Consumer close", .requires(.rabbitMQ))
struct ConsumerCloseTests {
    @Test(.timeLimit(.minutes(1)))
    func closingHandsASingleActiveConsumerQueueOverInOrder() async throws {
        let queue = AMQPTestSupport.uniqueQueue("close")
        let owner = try await AMQPTestSupport.connect(name: "close-owner")
        let standby = try await AMQPTestSupport.connect(name: "close-standby")
        try await withCleanup(queues: [queue]) {
            try await owner.declareQueue(AMQPQueue(name: queue, type: .classic, singleActiveConsumer: true))
            try await owner.publishBatch((0..<10).map { AMQPOutgoingMessage(routingKey: queue, body: AMQPTestSupport.body(sequence: $0)) })
            let first = try await owner.consume(queue: queue, prefetch: 20)
            let second = try await standby.consume(queue: queue, prefetch: 20)
            var deliveries = first.makeAsyncIterator()
            var received: [AMQPDelivery] = []
            while received.count < 10, let delivery = try await deliveries.next() { received.append(delivery) }
            #expect(received.map { AMQPTestSupport.sequence(of: $0.body) } == Array(0..<10))
            // 5 is acknowledged ahead of 3 and 4: such an ack is held back (for the multiple ack
            // that would cover it), and must go out before the channel closes all the same.
            for index in [0, 1, 2, 5] { try first.ack(received[index].deliveryTag) }
            try await first.close()
            #expect(try await deliveries.next() == nil, "the closed consumer's sequence ends")

            var next = second.makeAsyncIterator()
            var handedOver: [Int] = []
            while handedOver.count < 6, let delivery = try await next.next() {
                handedOver.append(AMQPTestSupport.sequence(of: delivery.body))
                try second.ack(delivery.deliveryTag)
            }
            #expect(handedOver == [3, 4, 6, 7, 8, 9], "the unacknowledged rest, at its places; the acknowledged never again")
            try await second.cancel()
            #expect(try await AMQPTestSupport.eventually { try await owner.queueState(queue).messageCount == 0 }, "nothing left")
            try await first.close()  // idempotent
        }
        await owner.close()
        await standby.close()
    }
}
