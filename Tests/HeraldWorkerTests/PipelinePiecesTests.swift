import Foundation
import HeraldAMQP
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Synchronization
import Testing

@testable import HeraldCore
@testable import HeraldWorker

/// Unit tests of the pipeline's pieces: no broker, no database.
@Suite("Pipeline pieces")
struct PipelinePiecesTests {
    // MARK: Keys

    /// The lanes' and the tracker's keys keep the hash they were made with: equal fields must
    /// still mean equal keys (one table entry), and any differing field a different one.
    @Test func orderingAndJoinKeysAreEqualExactlyWhenTheirFieldsAre() {
        let user = String(repeating: "u", count: 40)
        let lane = OrderingKey(userId: user, platform: .ios)
        #expect(lane == OrderingKey(userId: String(user), platform: .ios))
        #expect(lane.hashValue == OrderingKey(userId: String(user), platform: .ios).hashValue)
        #expect(lane != OrderingKey(userId: user, platform: .android))
        #expect(lane != OrderingKey(userId: user + "x", platform: .ios))
        #expect(Set([lane, OrderingKey(userId: user, platform: .ios), OrderingKey(userId: "v", platform: .ios)]).count == 2)

        let join = JoinKey(message: 7, deviceRef: 3, userId: user)
        #expect(join == JoinKey(message: 7, deviceRef: 3, userId: String(user)))
        #expect(join.hashValue == JoinKey(message: 7, deviceRef: 3, userId: String(user)).hashValue)
        for other in [
            JoinKey(message: 8, deviceRef: 3, userId: user), JoinKey(message: 7, deviceRef: 4, userId: user), JoinKey(message: 7, deviceRef: 3, userId: "0"),
        ] {
            #expect(join != other)
        }
        var table: [JoinKey: Int] = [join: 1]
        table[JoinKey(message: 7, deviceRef: 3, userId: user)] = 2
        #expect(table.count == 1 && table[join] == 2)
    }

    // MARK: MessageTracker

    /// Runs `body` with a factory of tracked messages. A message names the connection to
    /// acknowledge on; the tracker itself never uses it.
    private func withMessages(_ body: (_ message: (UInt64, UInt64) -> TrackedMessage) async throws -> Void) async throws {
        try await TestEnvironment.require(.rabbitMQ)
        let connection = try await AMQPConnection.connect(try AMQPConfiguration(url: TestEnvironment.amqpURL))
        do {
            try await body { tag, session in
                TrackedMessage(delivery: AMQPDelivery(body: Data(), routingKey: "q", deliveryTag: tag), queue: "q", connection: connection, session: session)
            }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    /// A delivery of journal message `message` to device `device`.
    private func delivery(message: Int64, device: Int64, platform: Platform = .ios) -> Delivery {
        let event = Event(id: "E", type: .message, dateTime: EventTimestamp(date: Date()), filters: [], params: [])
        let context = MessageContext(event: event, metadata: .defaults(for: "E"), key: MessageKey(text: "m\(message)"), journalId: message, publishedAt: nil)
        let subscription = Subscription(deviceId: "d\(device)", token: "t\(device)", platform: platform, userId: "u", culture: "ru-RU", deviceRef: device)
        let rendered = RenderedNotification(
            eventId: "E", culture: "ru-RU", platform: platform, title: "", body: "b", metadata: .defaults(for: "E"), isSilent: false)
        return Delivery(
            context: context, recipient: Recipient(subscription: subscription, addressedUserId: "u"), rendered: rendered, deviceRef: device, position: 1,
            inDoubt: false, attempts: 0, hasPendingRow: false
        )
    }

    @Test func trackerAcknowledgesAMessageOnlyWhenEveryDeliveryIsFinished() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let a = message(1, 1)
            tracker.register([a])
            let d1 = delivery(message: 1, device: 1), d2 = delivery(message: 1, device: 2)
            let (started, settled) = tracker.fanOut([(a, [.start(d1), .start(d2)])])
            #expect(started.count == 2 && settled.isEmpty)
            #expect(tracker.finish([d1]).isEmpty, "d2 still in flight")
            #expect(tracker.finish([d2]).map(\.delivery.deliveryTag) == [1])
            #expect(tracker.finish([d2]).isEmpty, "finishing twice settles nothing twice")
            #expect(tracker.messageCount == 0 && tracker.deliveryCount == 0)
        }
    }

    @Test func trackerJoinsADeliveryAlreadyInFlightAndReleasesBothMessages() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let first = message(1, 1), again = message(2, 1)
            tracker.register([first])
            tracker.register([again])
            let d = delivery(message: 7, device: 1)
            #expect(tracker.fanOut([(first, [.start(d)])]).started.count == 1)
            #expect(tracker.pinIfInFlight(d.joinKey))
            #expect(!tracker.pinIfInFlight(delivery(message: 7, device: 2).joinKey))
            let (started, settled) = tracker.fanOut([(again, [.join(d.joinKey)])])
            #expect(started.isEmpty && settled.isEmpty, "the redelivered message waits for the same delivery")
            #expect(Set(tracker.finish([d]).map(\.delivery.deliveryTag)) == [1, 2])
        }
    }

    @Test func aJoinOfADeliveryThatFinishedMeanwhileSettlesAtOnce() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let first = message(1, 1), again = message(2, 1)
            tracker.register([first])
            tracker.register([again])
            let d = delivery(message: 7, device: 1)
            _ = tracker.fanOut([(first, [.start(d)])])
            #expect(tracker.pinIfInFlight(d.joinKey))
            #expect(tracker.areAwaited([d]) == [true])
            #expect(tracker.finish([d]).count == 1)
            #expect(tracker.fanOut([(again, [.join(d.joinKey)])]).settled.map(\.delivery.deliveryTag) == [2], "recorded: nothing left to wait for")
        }
    }

    @Test func trackerNeverAcknowledgesAMessageWithADroppedDelivery() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let m = message(1, 1)
            tracker.register([m])
            let d1 = delivery(message: 1, device: 1), d2 = delivery(message: 1, device: 2)
            _ = tracker.fanOut([(m, [.start(d1), .start(d2)])])
            tracker.drop([d1])
            #expect(tracker.finish([d2]).isEmpty)
            #expect(tracker.messageCount == 1, "still unsettled: the broker requeues it")
            #expect(tracker.forgetSession(1) == 1)
            #expect(tracker.messageCount == 0)
        }
    }

    @Test func aDeliveryWhoseMessagesWentWithALostConnectionIsNoLongerAwaited() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let lost = message(1, 1)
            tracker.register([lost])
            let d = delivery(message: 1, device: 1)
            _ = tracker.fanOut([(lost, [.start(d)])])
            #expect(tracker.areAwaited([d]) == [true])
            #expect(tracker.forgetSession(1) == 1)
            #expect(tracker.areAwaited([d]) == [false], "the broker requeued its message: not ours to send any more")
            #expect(!tracker.settle(lost), "never acknowledged on the lost connection")
            let redelivered = message(1, 2)
            tracker.register([redelivered])
            #expect(tracker.pinIfInFlight(d.joinKey))
            #expect(tracker.areAwaited([d]) == [true], "a joiner is on its way")
            _ = tracker.fanOut([(redelivered, [.join(d.joinKey)])])
            #expect(tracker.areAwaited([d]) == [true], "the message came back here before the lane reached it")
            #expect(tracker.finish([d]).map(\.session) == [2])
        }
    }

    @Test func anInboxDropsWhatItHoldsWhenItsConsumerFails() async throws {
        try await withMessages { message in
            let inbox = MessageInbox()
            for tag in 1...3 { inbox.post(contentsOf: [message(UInt64(tag), 1)]) }
            inbox.end(error: AMQPError(code: .connectionLost, call: "test", message: "severed"))
            #expect(await inbox.take(max: 10) == nil, "requeued by the broker: never processed here")
            #expect(inbox.endError != nil)

            let normal = MessageInbox()
            normal.post(contentsOf: [message(4, 1)])
            normal.end(error: nil)
            #expect(await normal.take(max: 10)?.count == 1, "a cancelled consumer's messages are still ours")
        }
    }

    @Test func trackerSettlesAMessageWithoutDeliveriesAtOnce() async throws {
        try await withMessages { message in
            let tracker = MessageTracker()
            let m = message(7, 1), other = message(8, 1)
            tracker.register([m])
            tracker.register([other])
            #expect(tracker.fanOut([(m, [])]).settled.map(\.delivery.deliveryTag) == [7])
            #expect(tracker.settle(other))
            #expect(!tracker.settle(other), "settled once")
            #expect(tracker.messageCount == 0)
        }
    }

    // MARK: Retry parking

    @Test func parkedDeliveriesComeOutByDueTime() {
        var parked = ParkedDeliveries()
        let now = ContinuousClock.now
        let late = delivery(message: 1, device: 1), early = delivery(message: 2, device: 2), tie = delivery(message: 3, device: 3)
        parked.insert(late, due: now + .seconds(5))
        parked.insert(early, due: now + .seconds(1))
        parked.insert(tie, due: now + .seconds(1))
        #expect(parked.earliest == now + .seconds(1))
        #expect(parked.popDue(now: now).isEmpty)
        #expect(parked.popDue(now: now + .seconds(2)).map(\.deviceRef) == [2, 3])
        #expect(parked.count == 1)
        #expect(parked.removeAll().map(\.deviceRef) == [1])
        #expect(parked.earliest == nil)
    }

    @Test func parkedDeliveriesOfOnePlatformComeOutEarliestFirstAndTheRestStayInOrder() {
        var parked = ParkedDeliveries()
        let now = ContinuousClock.now
        for (device, seconds, platform) in [(1, 4, Platform.ios), (2, 1, .android), (3, 3, .android), (4, 2, .ios), (5, 5, .android)] {
            parked.insert(delivery(message: Int64(device), device: Int64(device), platform: platform), due: now + .seconds(seconds))
        }
        #expect(parked.removeAll { _ in false }.isEmpty)
        #expect(parked.removeAll { $0.recipient.subscription.platform == .android }.map(\.deviceRef) == [2, 3, 5])
        #expect(parked.count == 2 && parked.count(.ios) == 2 && parked.count(.android) == 0)
        #expect(parked.earliest == now + .seconds(2))
        #expect(parked.popDue(now: now + .seconds(10)).map(\.deviceRef) == [4, 1])
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
