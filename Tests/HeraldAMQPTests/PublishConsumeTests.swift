import Foundation
import HeraldAMQP
import HeraldTesting
import Testing

/// Volume tests: confirms, manual acks, order, throughput. Serialized so their rates are not
/// measured against each other.
@Suite("Publish with confirms and consume with acks", .serialized, .requires(.rabbitMQ))
struct PublishConsumeTests {
    @Test(.timeLimit(.minutes(2)))
    func tenThousandMessagesArriveOnceAndInOrder() async throws {
        let total = 10_000
        let queue = AMQPTestSupport.uniqueQueue("order")
        let connection = try await AMQPTestSupport.connect(name: "order-test")
        try await withCleanup(queues: [queue]) {
            try await connection.declareQueue(AMQPQueue(name: queue, type: .classic))

            let headers: AMQPTable = ["AvoidDublication": true, "x-herald-trace": "t-1", "nested": ["depth": 2, "list": [1, "two"]]]
            let messages = (0..<total).map { sequence in
                AMQPOutgoingMessage(
                    routingKey: queue,
                    body: AMQPTestSupport.body(sequence: sequence),
                    properties: AMQPProperties(
                        contentType: "application/octet-stream",
                        headers: sequence == 0 ? headers : [:],
                        messageID: "m-\(sequence)",
                        timestamp: Date(timeIntervalSince1970: 1_700_000_000),
                        type: "w1.pushnotification",
                        appID: "herald-tests"
                    )
                )
            }
            let publishStart = ContinuousClock.now
            try await withTimeout(.seconds(60), "publishing \(total) messages") {
                try await connection.publishBatch(messages)
            }
            let publishElapsed = ContinuousClock.now - publishStart
            #expect(try await connection.queueState(queue).messageCount == UInt32(total))

            let consumer = try await connection.consume(queue: queue, prefetch: 200)
            let consumeStart = ContinuousClock.now
            let (received, outOfOrder, duplicates, first) = try await withTimeout(.seconds(60), "consuming \(total) messages") {
                var received = 0
                var outOfOrder = 0
                var seen = Set<Int>()
                var duplicates = 0
                var first: AMQPDelivery?
                for try await delivery in consumer {
                    let sequence = AMQPTestSupport.sequence(of: delivery.body)
                    if sequence != received { outOfOrder += 1 }
                    if !seen.insert(sequence).inserted { duplicates += 1 }
                    if first == nil { first = delivery }
                    try consumer.ack(delivery.deliveryTag)
                    received += 1
                    if received == total { break }
                }
                return (received, outOfOrder, duplicates, first)
            }
            let consumeElapsed = ContinuousClock.now - consumeStart
            #expect(received == total)
            #expect(outOfOrder == 0)
            #expect(duplicates == 0)

            let delivery = try #require(first)
            #expect(delivery.properties.headers == headers)
            #expect(delivery.properties.messageID == "m-0")
            #expect(delivery.properties.contentType == "application/octet-stream")
            #expect(delivery.properties.deliveryMode == .persistent)
            #expect(delivery.properties.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
            #expect(delivery.properties.type == "w1.pushnotification")
            #expect(delivery.properties.appID == "herald-tests")
            #expect(delivery.routingKey == queue)
            #expect(delivery.redelivered == false)
            #expect(delivery.consumerTag == consumer.consumerTag)

            // Leaving the loop does not stop the consumer; cancel it. Every ack reached the broker:
            // nothing ready, and nothing unacknowledged that closing would requeue.
            try await consumer.cancel()
            let drained = try await AMQPTestSupport.eventually {
                let state = try await connection.queueState(queue)
                return state.messageCount == 0 && state.consumerCount == 0
            }
            #expect(drained)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await connection.queueState(queue).messageCount == 0)

            print(
                "[herald-amqp] \(total) persistent 508-byte messages: publish with confirms \(Self.rate(total, publishElapsed)) msg/s, consume (prefetch 200, ack each, coalesced) \(Self.rate(total, consumeElapsed)) msg/s"
            )
            await connection.close()
        }
    }

    /// Waiting messages come out of the socket several per read: `nextBatch()` hands them over
    /// at once, and mixing it with `next()` keeps the broker's order and loses nothing.
    @Test(.timeLimit(.minutes(1)))
    func batchesKeepOrderAndMixWithSingleDeliveries() async throws {
        let total = 2_000
        let queue = AMQPTestSupport.uniqueQueue("batches")
        let connection = try await AMQPTestSupport.connect(name: "batches-test")
        try await withCleanup(queues: [queue]) {
            try await connection.declareQueue(AMQPQueue(name: queue))
            try await withTimeout(.seconds(30), "publishing \(total) messages") {
                try await connection.publishBatch((0..<total).map { AMQPOutgoingMessage(routingKey: queue, body: AMQPTestSupport.body(sequence: $0)) })
            }
            let consumer = try await connection.consume(queue: queue, prefetch: 500)
            let (sequences, largestBatch) = try await withTimeout(.seconds(30), "consuming \(total) messages") {
                var deliveries = consumer.makeAsyncIterator()
                var sequences: [Int] = []
                var largestBatch = 0
                var takeBatch = true
                while sequences.count < total {
                    let taken: [AMQPDelivery]
                    if takeBatch {
                        taken = try #require(try await deliveries.nextBatch())
                        #expect(!taken.isEmpty)
                        largestBatch = max(largestBatch, taken.count)
                    } else {
                        taken = [try #require(try await deliveries.next())]
                    }
                    takeBatch.toggle()
                    for delivery in taken {
                        sequences.append(AMQPTestSupport.sequence(of: delivery.body))
                        try consumer.ack(delivery.deliveryTag)
                    }
                }
                return (sequences, largestBatch)
            }
            #expect(sequences == Array(0..<total))
            #expect(largestBatch > 1)
            try await consumer.cancel()
            await connection.close()
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func hundredThousandMessageBatch() async throws {
        let total = 100_000
        let queue = AMQPTestSupport.uniqueQueue("batch")
        let connection = try await AMQPTestSupport.connect(name: "batch-test")
        try await withCleanup(queues: [queue]) {
            try await connection.declareQueue(AMQPQueue(name: queue))
            let body = AMQPTestSupport.body(sequence: 0)
            let messages = (0..<total).map { _ in AMQPOutgoingMessage(routingKey: queue, body: body) }

            let start = ContinuousClock.now
            try await withTimeout(.seconds(90), "publishing \(total) messages") {
                try await connection.publishBatch(messages)
            }
            let elapsed = ContinuousClock.now - start
            #expect(try await connection.queueState(queue).messageCount == UInt32(total))
            print("[herald-amqp] batch of \(total) persistent 508-byte messages with confirms: \(Self.rate(total, elapsed)) msg/s")
            #expect(try await connection.purgeQueue(queue) == UInt32(total))
            await connection.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrentPublishersPipeline() async throws {
        let total = 2_000
        let queue = AMQPTestSupport.uniqueQueue("concurrent")
        let connection = try await AMQPTestSupport.connect(name: "concurrent-test")
        try await withCleanup(queues: [queue]) {
            try await connection.declareQueue(AMQPQueue(name: queue))
            let start = ContinuousClock.now
            try await withTimeout(.seconds(30), "\(total) concurrent publishes") {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for sequence in 0..<total {
                        group.addTask {
                            try await connection.publish(AMQPTestSupport.body(sequence: sequence), routingKey: queue)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let elapsed = ContinuousClock.now - start
            #expect(try await connection.queueState(queue).messageCount == UInt32(total))
            print("[herald-amqp] \(total) concurrent single publishes with confirms: \(Self.rate(total, elapsed)) msg/s")
            await connection.close()
        }
    }

    static func rate(_ count: Int, _ elapsed: Duration) -> Int {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Int(Double(count) / max(seconds, 0.000_001))
    }
}
