import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Synchronization
import Testing
@testable import HeraldWorker

/// Unit tests of the pipeline's pieces: no broker, no database.
@Suite("Pipeline pieces")
struct PipelinePiecesTests {
    // MARK: Batcher

    @Test func batcherGathersConcurrentCallersIntoFewFlushes() async throws {
        let flushed = Mutex<[[Int]]>([])
        let batcher = Batcher<Int>(maxBatch: 50, window: .milliseconds(5), maxConcurrent: 1) { items in
            flushed.withLock { $0.append(items) }
            try? await Task.sleep(for: .milliseconds(2))
            return true
        }
        let answers = await withTaskGroup(of: Bool.self) { group in
            for n in 0..<200 { group.addTask { await batcher.submit(n) } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        let batches = flushed.withLock { $0 }
        #expect(answers.count == 200 && answers.allSatisfy { $0 })
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<200), "every item flushed exactly once")
        #expect(batches.allSatisfy { $0.count <= 50 })
        #expect(batches.count < 40, "200 concurrent callers made \(batches.count) flushes")
        #expect(await batcher.flushes == batches.count)
    }

    @Test func batcherReturnsOnlyAfterItsBatchWasFlushedAndPassesTheAnswer() async {
        let done = Atomic<Int>(0)
        let batcher = Batcher<Int>(maxBatch: 10, window: .zero, maxConcurrent: 2) { items in
            try? await Task.sleep(for: .milliseconds(20))
            done.add(items.count, ordering: .relaxed)
            return items.first != 13
        }
        #expect(await batcher.submit(1) == true)
        #expect(done.load(ordering: .relaxed) == 1, "submit returned after the flush")
        #expect(await batcher.submit(13) == false, "the flush's answer reaches the caller")
    }

    // MARK: MessageTracker

    /// Runs `body` with a factory of tracked messages. A message record names the connection
    /// to acknowledge on; the tracker itself never uses it.
    private func withMessages(_ body: (_ message: (UInt64) -> MessageTracker.Message) async throws -> Void) async throws {
        let connection = try await AMQPConnection.connect(try AMQPConfiguration(url: TestEnvironment.amqpURL))
        do {
            try await body { tag in
                MessageTracker.Message(delivery: AMQPDelivery(body: Data(), routingKey: "q", deliveryTag: tag), connection: connection, session: 1)
            }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    @Test func trackerAcknowledgesAMessageOnlyWhenSealedAndEveryDeliveryFinished() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let a = tracker.register(message(1))
            let k1 = DeliveryKey(rawValue: "k1"), k2 = DeliveryKey(rawValue: "k2")
            #expect(tracker.attach(a, to: k1) == .started)
            #expect(tracker.finish(k1).isEmpty, "not sealed yet: fan-out is still running")
            #expect(tracker.attach(a, to: k2) == .started)
            #expect(tracker.seal(a) == nil, "k2 still in flight")
            let ready = tracker.finish(k2)
            #expect(ready.map(\.delivery.deliveryTag) == [1])
            #expect(tracker.messageCount == 0 && tracker.deliveryCount == 0)
        }
    }

    @Test func trackerJoinsADeliveryAlreadyInFlightAndReleasesBothMessages() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let first = tracker.register(message(1))
            let again = tracker.register(message(2))
            let key = DeliveryKey(rawValue: "k")
            #expect(tracker.attach(first, to: key) == .started)
            #expect(tracker.attach(again, to: key) == .joined, "the redelivered message waits for the same delivery")
            #expect(tracker.seal(first) == nil && tracker.seal(again) == nil)
            #expect(Set(tracker.finish(key).map(\.delivery.deliveryTag)) == [1, 2])
        }
    }

    @Test func trackerNeverAcknowledgesAMessageWithAnAbandonedDelivery() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let id = tracker.register(message(1))
            let k1 = DeliveryKey(rawValue: "k1"), k2 = DeliveryKey(rawValue: "k2")
            _ = tracker.attach(id, to: k1)
            _ = tracker.attach(id, to: k2)
            #expect(tracker.seal(id) == nil)
            tracker.abandon(k1)
            #expect(tracker.finish(k2).isEmpty)
            #expect(tracker.messageCount == 1, "still unsettled: the broker requeues it")
            #expect(tracker.forgetSession(1) == 1)
            #expect(tracker.messageCount == 0)
        }
    }

    @Test func aDeliveryWhoseMessagesWentWithALostConnectionIsNoLongerAwaited() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let key = DeliveryKey(rawValue: "k")
            let lost = tracker.register(message(1))
            #expect(tracker.attach(lost, to: key) == .started)
            #expect(tracker.isAwaited(key))
            #expect(tracker.forgetSession(1) == 1)
            #expect(!tracker.isAwaited(key), "the broker requeued its message: not ours to send any more")
            let first = message(2)
            let redelivered = tracker.register(MessageTracker.Message(delivery: first.delivery, connection: first.connection, session: 2))
            #expect(tracker.attach(redelivered, to: key) == .joined, "the message came back here before the lane reached it")
            #expect(tracker.isAwaited(key))
        }
    }

    @Test func anInboxDropsWhatItHoldsWhenItsConsumerFails() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let inbox = DeliveryInbox()
            for tag in 1...3 {
                let m = message(UInt64(tag))
                inbox.put(DeliveryInbox.Item(id: tracker.register(m), message: m))
            }
            inbox.end(error: AMQPError(code: .connectionLost, call: "test", message: "severed"))
            #expect(await inbox.take(max: 10) == nil, "requeued by the broker: never processed here")
            #expect(inbox.endError != nil)

            let normal = DeliveryInbox()
            let m = message(4)
            normal.put(DeliveryInbox.Item(id: tracker.register(m), message: m))
            normal.end(error: nil)
            #expect(await normal.take(max: 10)?.count == 1, "a cancelled consumer's messages are still ours")
        }
    }

    @Test func trackerSealsAMessageWithoutDeliveriesAtOnce() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let id = tracker.register(message(7))
            #expect(tracker.seal(id)?.delivery.deliveryTag == 7)
            let other = tracker.register(message(8))
            #expect(tracker.remove(other)?.delivery.deliveryTag == 8)
            #expect(tracker.messageCount == 0)
        }
    }

    // MARK: Dead-letter headers

    @Test func deadLetterHeadersKeepTheOriginalAndAddHeraldsFields() {
        let original = AMQPProperties(
            contentType: "application/xml", headers: ["AvoidDublication": true, "x-custom": "1"], deliveryMode: .persistent, messageID: "m-1",
            userID: "producer"
        )
        let failedAt = Date(timeIntervalSince1970: 1_700_000_000.25)
        let long = String(repeating: "r", count: 5_000)
        let properties = DeadLetterHeaders.deadLetterProperties(
            original: original, code: .parameterCount, reason: long, id: "dl-1", queue: "w1.pushnotification", eventId: "EVENT 006", failedAt: failedAt
        )
        #expect(properties.contentType == "application/xml")
        #expect(properties.messageID == "m-1")
        #expect(properties.userID == nil, "the broker checks user-id against Herald's own connection")
        #expect(properties.headers["AvoidDublication"] == .bool(true))
        #expect(properties.headers["x-custom"] == .string("1"))
        #expect(properties.headers["x-herald-error"] == .string("parameter_count"))
        #expect(properties.headers["x-herald-reason"]?.stringValue?.count == 1_000)
        #expect(properties.headers["x-herald-dead-letter-id"] == .string("dl-1"))
        #expect(properties.headers["x-herald-original-queue"] == .string("w1.pushnotification"))
        #expect(properties.headers["x-herald-failed-at"] == .timestamp(failedAt))
        #expect(properties.headers["x-herald-failed-at-ms"] == .int(1_700_000_000_250))
        #expect(properties.headers["x-herald-event-id"] == .string("EVENT 006"))

        var withDeath = properties
        withDeath.headers["x-death"] = .array([["reason": "rejected"]])
        let replay = DeadLetterHeaders.replayProperties(withDeath)
        #expect(
            replay.headers == ["AvoidDublication": true, "x-custom": "1", "x-herald-replayed": true],
            "Herald's headers and x-death are removed for a replay, which is marked as one"
        )
        #expect(replay.messageID == "m-1" && replay.contentType == "application/xml")
    }

    @Test func templateErrorsMapToDeadLetterCodes() {
        #expect(DeadLetterCode.forTemplateError(TemplateError(code: .noTemplate, reason: "")) == .missingTemplate)
        #expect(DeadLetterCode.forTemplateError(TemplateError(code: .missingParameter, reason: "")) == .parameterCount)
        #expect(DeadLetterCode.forTemplateError(TemplateError(code: .malformedTemplate, reason: "")) == .invalidTemplate)
    }

    // MARK: Message key and headers

    @Test func messageKeyIsTheMessageIdElseTheBodyHash() {
        let body = Data("<PushNotification/>".utf8)
        let withID = AMQPDelivery(body: body, routingKey: "q", deliveryTag: 1, properties: AMQPProperties(messageID: "abc"))
        let without = AMQPDelivery(body: body, routingKey: "q", deliveryTag: 2)
        #expect(IncomingMessage.messageKey(withID) == "abc")
        #expect(IncomingMessage.messageKey(without) == DeliveryKey.messageKey(forBody: body))
        #expect(IncomingMessage.messageKey(without).count == 64)
    }

    @Test func avoidDublicationHeaderAcceptsBooleansAndStrings() {
        func delivery(_ headers: AMQPTable) -> AMQPDelivery {
            AMQPDelivery(body: Data(), routingKey: "q", deliveryTag: 1, properties: AMQPProperties(headers: headers))
        }
        #expect(IncomingMessage.avoidsDuplication(delivery(["AvoidDublication": true])))
        #expect(IncomingMessage.avoidsDuplication(delivery(["AvoidDublication": "True"])))
        #expect(IncomingMessage.avoidsDuplication(delivery(["AvoidDuplication": true])))
        #expect(!IncomingMessage.avoidsDuplication(delivery(["AvoidDublication": false])))
        #expect(!IncomingMessage.avoidsDuplication(delivery([:])))
    }

    @Test func latencyPercentilesAreWithinTheBucketWidth() throws {
        let histogram = LatencyHistogram()
        for ms in 1...100 { histogram.record(.milliseconds(ms)) }
        let p50 = try #require(histogram.percentile(0.5))
        let p99 = try #require(histogram.percentile(0.99))
        #expect(p50 >= .milliseconds(50) && p50 <= .microseconds(51_100))
        #expect(p99 >= .milliseconds(99) && p99 <= .microseconds(101_000))
        #expect(LatencyHistogram().percentile(0.5) == nil)
    }
}
