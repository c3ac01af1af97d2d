import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTesting
import Testing

@testable import HeraldStore

/// `DeliveryLookup`: the support desk's answers from the journal and the dead-letter record.
@Suite("DeliveryLookup")
struct SupportLookupTests {
    @Test func aMessageWithItsDeliveriesStatesAndProviderIds() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1", token: "a1b2c3d4e5f60718293a4b5c6d7e8f90"))
            try await store.devices.subscribe(StoreFixture.registration("d2", user: "u1", platform: .android))
            let d1 = try #require(try await store.devices.storeId(deviceId: "d1"))
            let d2 = try #require(try await store.devices.storeId(deviceId: "d2"))
            let answer = try await store.journal.claim(
                ClaimBatch(
                    messages: [MessageKey(text: "transfer-1")], eventIds: ["TransferIssued"],
                    deliveries: [ClaimBatch.Delivery(message: 0, deviceRef: d1), ClaimBatch.Delivery(message: 0, deviceRef: d2)]
                ))
            let id = try #require(answer.messageIds[0])
            try await store.journal.record([
                DeliveryRecord(
                    deviceRef: d1, position: answer.positions[0]!, messageId: id, userId: "u1", state: .sent, attempts: 1, providerId: "apns-id-1",
                    payload: Array("{}".utf8))
            ])

            // One recorded, one still in flight.
            var report = try await store.lookup.message(key: "transfer-1")
            #expect(report.summary == "partly_sent")
            #expect(report.copies.count == 1)
            #expect(report.copies[0].planned == 2)
            #expect(report.copies[0].claimedWithoutOutcome == 1)
            #expect(report.copies[0].eventId == "TransferIssued")
            #expect(report.deliveries.count == 1)
            let sent = try #require(report.deliveries.first)
            #expect(sent.status.deviceId == "d1")
            #expect(sent.status.platform == .ios)
            #expect(sent.stateName == "sent")
            #expect(sent.status.providerId == "apns-id-1")
            #expect(sent.shortToken == "a1b2…8f90")
            #expect(sent.sentAt != nil)

            try await store.journal.record([
                DeliveryRecord(
                    deviceRef: d2, position: answer.positions[1]!, messageId: id, userId: "u1", state: .pending, attempts: 2, lastError: "Unavailable")
            ])
            report = try await store.lookup.message(key: "transfer-1")
            #expect(report.copies[0].claimedWithoutOutcome == 0)
            #expect(report.deliveries.map(\.stateName).sorted() == ["retrying", "sent"])
            let retrying = try #require(report.deliveries.first { $0.status.deviceId == "d2" })
            #expect(retrying.status.lastError == "Unavailable")
            #expect(retrying.status.attempts == 2)
            #expect(retrying.sentAt == nil)

            // The JSON the CLI and the admin route print: no whole token anywhere.
            let json = report.json.serializedString()
            #expect(!json.contains("a1b2c3d4e5f60718293a4b5c6d7e8f90"))
            #expect(json.contains(#""providerId":"apns-id-1""#))
        }
    }

    @Test func unknownDeadLetteredAndRepeatedMessages() async throws {
        try await TestStore.with { store, _ in
            #expect(try await store.lookup.message(key: "never").isUnknown)
            #expect(try await store.lookup.message(key: "never").summary == "unknown")

            try await store.deadLetters.record(
                DeadLetter(messageKey: "bad-1", queue: "q", errorCode: "unknown_event", reason: "no template for event Nope", eventId: "Nope"))
            let dead = try await store.lookup.message(key: "bad-1")
            #expect(!dead.isUnknown)
            #expect(dead.summary == "dead_lettered")
            #expect(dead.deadLetters.map(\.reason) == ["no template for event Nope"])

            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            let positions = try await JournalSeed.record(store, deviceId: "d1", userId: "u1", messageKeys: ["dup-1"])
            #expect(positions == [1])
            let history = try await store.journal.history(of: [MessageKey(text: "dup-1")])
            let id = try #require(history.first?.id)
            try await store.journal.noteRepeats([id, id])
            try await store.journal.noteRepeats([id])
            let repeated = try await store.lookup.message(key: "dup-1")
            #expect(repeated.summary == "sent")
            #expect(repeated.repeatsDropped == 3)
            #expect(repeated.copies[0].lastRepeatAt != nil)
        }
    }

    @Test func partitionCopiesAreFoundWithThePartitionCount() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            let d1 = try #require(try await store.devices.storeId(deviceId: "d1"))
            let answer = try await store.journal.claim(
                ClaimBatch(
                    messages: [MessageKey(text: "p-1", partitionSuffix: "#p1/4")], eventIds: ["E"], deliveries: [ClaimBatch.Delivery(message: 0, deviceRef: d1)]
                ))
            try await store.journal.record([
                DeliveryRecord(
                    deviceRef: d1, position: answer.positions[0]!, messageId: answer.messageIds[0]!, userId: "u1", state: .failed, attempts: 8,
                    lastError: "BadDeviceToken?")
            ])
            #expect(try await store.lookup.message(key: "p-1").isUnknown)
            let report = try await store.lookup.message(key: "p-1", partitions: 4)
            #expect(report.copies.map(\.partition) == ["#p1/4"])
            #expect(report.summary == "not_sent")
            #expect(report.deliveries.first?.stateName == "failed")
        }
    }

    @Test func aUsersDeliveriesSinceATimeNewestFirst() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            try await store.devices.subscribe(StoreFixture.registration("d2", user: "u2"))
            try await JournalSeed.record(store, deviceId: "d1", userId: "u1", messageKeys: ["a", "b", "c"])
            try await JournalSeed.record(store, deviceId: "d2", userId: "u2", messageKeys: ["x"])
            let all = try await store.lookup.deliveries(userId: "u1", since: Date().addingTimeInterval(-3600))
            #expect(all.deliveries.map(\.status.messageKey) == ["c", "b", "a"])
            #expect(all.hasMore == false)
            let page = try await store.lookup.deliveries(userId: "u1", since: Date().addingTimeInterval(-3600), limit: 2)
            #expect(page.deliveries.count == 2 && page.hasMore)
            #expect(try await store.lookup.deliveries(userId: "u1", since: Date().addingTimeInterval(60)).deliveries.isEmpty)
            #expect(try await store.lookup.deliveries(userId: "nobody", since: .distantPast).deliveries.isEmpty)
        }
    }
}
