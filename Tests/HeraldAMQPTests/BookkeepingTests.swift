import CRabbitMQ
import Foundation
import Synchronization
import Testing

@testable import HeraldAMQP

@Suite("Ack coalescing and confirm bookkeeping")
struct BookkeepingTests {
    /// A delivery's exchange and routing key reuse the previous delivery's strings only when the
    /// wire bytes spell them.
    @Test func aKnownStringIsReusedOnlyWhenTheBytesSpellIt() {
        var wire = Array("w1.pushnotification".utf8)
        wire.withUnsafeMutableBytes { raw in
            let bytes = amqp_bytes_t(len: raw.count, bytes: raw.baseAddress)
            #expect(FieldTableCodec.string(bytes, reusing: "w1.pushnotification") == "w1.pushnotification")
            #expect(FieldTableCodec.string(bytes, reusing: "w1.pushnotificatioN") == "w1.pushnotification")
            #expect(FieldTableCodec.string(bytes, reusing: "w1.push") == "w1.pushnotification")
            #expect(FieldTableCodec.string(bytes, reusing: nil) == "w1.pushnotification")
            #expect(!FieldTableCodec.equals(bytes, ""))
        }
        let empty = amqp_bytes_t(len: 0, bytes: nil)
        #expect(FieldTableCodec.equals(empty, "") && !FieldTableCodec.equals(empty, "x"))
        #expect(FieldTableCodec.string(empty, reusing: "x") == "")
    }

    /// Deliveries and properties share their values between copies (``HeraldSupport/Shared``):
    /// a change to a copy is still the copy's alone.
    @Test func aChangedCopyOfADeliveryLeavesTheOriginalAsItWas() {
        let original = AMQPDelivery(
            body: Data("a".utf8), routingKey: "w1.pushnotification", deliveryTag: 1, properties: AMQPProperties(headers: ["k": .string("v")]))
        var copy = original
        copy.redelivered = true
        copy.properties.headers["k"] = .string("w")
        copy.properties.messageID = "m"
        #expect(!original.redelivered)
        #expect(original.properties.headers["k"] == .string("v"))
        #expect(original.properties.messageID == nil)
        #expect(copy.properties.headers["k"] == .string("w"))
        #expect(copy != original)
        copy.redelivered = false
        copy.properties.headers["k"] = .string("v")
        copy.properties.messageID = nil
        #expect(copy == original)
        #expect(copy.hashValue == original.hashValue)
    }

    @Test func ackPrefixCoalescesTheOldestRun() {
        var ledger = DeliveryLedger()
        for tag in UInt64(1)...6 { ledger.record(tag) }
        var acks: Set<UInt64> = [1, 2, 3, 5]
        let prefix = ledger.takeAckPrefix(from: &acks)
        #expect(prefix?.last == 3)
        #expect(prefix?.count == 3)
        #expect(acks == [5])  // not contiguous with the front: sent alone
        let settledFive = ledger.settle(5)
        #expect(settledFive)
        #expect(ledger.count == 2)
        #expect(ledger.contains(4) && ledger.contains(6))
    }

    @Test func theOldestArrivalFollowsTheFront() throws {
        var ledger = DeliveryLedger()
        let start = ContinuousClock.now
        for tag in UInt64(1)...3 { ledger.record(tag, arrived: start + .milliseconds(Int(tag))) }
        #expect(ledger.oldestArrival == start + .milliseconds(1))
        #expect(ledger.frontSince == start + .milliseconds(1))
        ledger.settle(2)
        #expect(ledger.oldestArrival == start + .milliseconds(1), "the front is still outstanding")
        #expect(ledger.frontSince == start + .milliseconds(1))
        let beforeSettle = ContinuousClock.now
        ledger.settle(1)
        #expect(ledger.oldestArrival == start + .milliseconds(3), "2 was settled before: 3 is the front")
        #expect(try #require(ledger.frontSince) >= beforeSettle, "the front since it became the front")
        ledger.settle(3)
        #expect(ledger.oldestArrival == nil)
        #expect(ledger.frontSince == nil)
    }

    @Test func prefixSkipsTagsSettledEarlier() {
        var ledger = DeliveryLedger()
        for tag in UInt64(1)...5 { ledger.record(tag) }
        let settledTwo = ledger.settle(2)  // nacked before
        #expect(settledTwo)
        var acks: Set<UInt64> = [1, 3]
        let prefix = ledger.takeAckPrefix(from: &acks)
        #expect(prefix?.last == 3)
        #expect(prefix?.count == 2)
        #expect(acks.isEmpty)
        #expect(ledger.count == 2)
    }

    @Test func noPrefixWhenTheOldestIsNotAcked() {
        var ledger = DeliveryLedger()
        for tag in UInt64(1)...3 { ledger.record(tag) }
        var acks: Set<UInt64> = [2, 3]
        let prefix = ledger.takeAckPrefix(from: &acks)
        #expect(prefix == nil)
        #expect(acks == [2, 3])
    }

    @Test func doubleSettlementIsRefused() {
        var ledger = DeliveryLedger()
        ledger.record(7)
        let first = ledger.settle(7)
        let second = ledger.settle(7)
        #expect(first)
        #expect(!second)
        #expect(!ledger.contains(7))
        #expect(ledger.isEmpty)
    }

    @Test func multipleSettlesThroughATag() {
        var ledger = DeliveryLedger()
        for tag in UInt64(1)...10 { ledger.record(tag) }
        let firstRun = ledger.settle(through: 4)
        let secondRun = ledger.settle(through: 4)
        #expect(firstRun == 4)
        #expect(secondRun == 0)
        #expect(ledger.count == 6)
    }

    @Test func ledgerStaysCorrectOverManyDeliveries() {
        var ledger = DeliveryLedger()
        var expected = Set<UInt64>()
        for tag in UInt64(1)...20_000 {
            ledger.record(tag)
            expected.insert(tag)
            if tag % 3 == 0 {
                var acks: Set<UInt64> = [tag - 2, tag - 1, tag]
                if let prefix = ledger.takeAckPrefix(from: &acks) {
                    #expect(prefix.count == 3)
                }
                expected.subtract([tag - 2, tag - 1, tag])
            }
        }
        #expect(ledger.count == expected.count)
    }

    @Test func confirmsCompleteSinglyAndMultiply() {
        let results = Results()
        var tracker = PublishTracker()
        let message = AMQPOutgoingMessage(routingKey: "q", body: Data([1]))
        for index in 0..<5 { tracker.register(.single({ results.append(index, $0) }), message: message) }
        tracker.confirm(2, multiple: false, nack: nil)
        #expect(results.outcomes.map(\.0) == [1])
        tracker.confirm(4, multiple: true, nack: nil)
        #expect(results.outcomes.map(\.0) == [1, 0, 2, 3])
        tracker.confirm(5, multiple: false, nack: AMQPError(code: .publishNacked, call: "t", message: "nack"))
        #expect(results.outcomes.count == 5)
        #expect(results.failures == [4])
        #expect(tracker.isEmpty)
    }

    @Test func returnFailsTheMatchingMandatoryPublish() {
        let results = Results()
        var tracker = PublishTracker()
        let routed = AMQPOutgoingMessage(routingKey: "bound", body: Data("a".utf8), mandatory: true)
        let unroutable = AMQPOutgoingMessage(routingKey: "nowhere", body: Data("b".utf8), mandatory: true)
        tracker.register(.single({ results.append(0, $0) }), message: routed)
        tracker.register(.single({ results.append(1, $0) }), message: unroutable)
        let error = AMQPError(code: .unroutable, call: "t", message: "NO_ROUTE", replyCode: 312)
        let matched = tracker.markReturned(exchange: "", routingKey: "nowhere", body: Data("b".utf8), error: error)
        let matchedAgain = tracker.markReturned(exchange: "", routingKey: "nowhere", body: Data("b".utf8), error: error)
        #expect(matched)
        #expect(!matchedAgain)
        tracker.confirm(2, multiple: true, nack: nil)
        #expect(results.failures == [1])
        #expect(results.outcomes.count == 2)
    }

    @Test func batchReportsFailedIndices() {
        let outcome = Mutex<Result<Void, AMQPError>?>(nil)
        let batch = PublishBatch(count: 3) { result in outcome.withLock { $0 = result } }
        batch.settle(index: 0, error: nil)
        batch.settle(index: 2, error: AMQPError(code: .publishNacked, call: "t", message: "n"))
        #expect(outcome.withLock { $0 } == nil)
        batch.settle(index: 1, error: nil)
        guard case .failure(let error)? = outcome.withLock({ $0 }) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .publishNacked)
        #expect(error.failedMessageIndices == [2])
    }
}

private final class Results: Sendable {
    private let storage = Mutex<[(Int, Bool)]>([])
    func append(_ index: Int, _ result: Result<Void, AMQPError>) {
        let ok = if case .success = result { true } else { false }
        storage.withLock { $0.append((index, ok)) }
    }
    var outcomes: [(Int, Bool)] { storage.withLock { $0 } }
    var failures: [Int] { outcomes.filter { !$0.1 }.map(\.0) }
}
