import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTesting
import Testing

@testable import HeraldStore

@Suite("DeliveryJournal")
struct DeliveryJournalTests {
    /// The store ids of the devices, subscribing them for `user` first.
    static func devices(_ store: Store, _ ids: [String], user: String = "u1") async throws -> [Int64] {
        var refs: [Int64] = []
        for id in ids {
            try await store.devices.subscribe(StoreFixture.registration(id, user: user))
            refs.append(try #require(try await store.devices.storeId(deviceId: id)))
        }
        return refs
    }

    static func batch(_ messages: [String], _ deliveries: [(Int, Int64)]) -> ClaimBatch {
        ClaimBatch(
            messages: messages.map { MessageKey(text: $0) }, eventIds: messages.map { _ in "E" },
            deliveries: deliveries.map { ClaimBatch.Delivery(message: $0.0, deviceRef: $0.1) }
        )
    }

    static func sent(_ deviceRef: Int64, _ position: Int64, message: Int64, user: String = "u1", payload: String = "{}") -> DeliveryRecord {
        DeliveryRecord(deviceRef: deviceRef, position: position, messageId: message, userId: user, state: .sent, attempts: 1, payload: Array(payload.utf8))
    }

    @Test func newMessagesGetRowsAndConsecutivePositionsPerDevice() async throws {
        try await TestStore.with { store, _ in
            let refs = try await Self.devices(store, ["d1", "d2"])
            let (d1, d2) = (refs[0], refs[1])
            #expect(try await store.journal.claim(ClaimBatch()) == ClaimAnswer(messageIds: [], positions: []))
            // m1 → d1, d2; m2 → d1; a key repeated in the batch is new once; a missing device gets no position.
            let answer = try await store.journal.claim(Self.batch(["m1", "m2", "m1", "m3"], [(0, d1), (0, d2), (1, d1), (2, d1), (3, 999_999)]))
            #expect(answer.messageIds[0] != nil && answer.messageIds[1] != nil && answer.messageIds[3] != nil)
            #expect(answer.messageIds[2] == nil)
            #expect(answer.positions == [1, 1, 2, nil, nil])
            // Known messages are not new again and reserve nothing; new ones go on numbering.
            let again = try await store.journal.claim(Self.batch(["m2", "m4"], [(0, d1), (1, d1)]))
            #expect(again.messageIds[0] == nil && again.messageIds[1] != nil)
            #expect(again.positions == [nil, 3])
            #expect(try await store.devices.device(id: "d1")?.nextPosition == 4)
            #expect(try await store.journal.reservePositions([d2, d1, d2, 999_999]) == [2, 4, 3, nil])
        }
    }

    /// A batch that may hold known keys is claimed with the statement that skips them; one that
    /// should not, but does (a producer's repeat), falls back to it after the plain insert fails
    /// on the known key, which leaves nothing behind: both give the same answer and positions.
    @Test(arguments: [false, true])
    func aKnownKeyIsSkippedWhetherExpectedOrNot(expected: Bool) async throws {
        try await TestStore.with { store, _ in
            let d1 = try await Self.devices(store, ["d1"])[0]
            _ = try await store.journal.claim(Self.batch(["m1"], [(0, d1)]))
            var batch = Self.batch(["m2", "m1", "m3"], [(0, d1), (1, d1), (2, d1)])
            batch.mayHoldKnown = expected
            let answer = try await store.journal.claim(batch)
            #expect(answer.messageIds[0] != nil && answer.messageIds[1] == nil && answer.messageIds[2] != nil)
            #expect(answer.positions == [2, nil, 3])
            #expect(try await store.devices.device(id: "d1")?.nextPosition == 4)
            #expect(try await store.journal.history(of: [MessageKey(text: "m2"), MessageKey(text: "m3")]).count == 2)
        }
    }

    @Test func aBatchWithTwoRowsForOneDeliveryKeepsTheFirstTerminalOne() async throws {
        try await TestStore.with { store, _ in
            let refs = try await Self.devices(store, ["d1", "d2"])
            let id = try #require(try await store.journal.claim(Self.batch(["m1"], refs.map { (0, $0) })).messageIds[0])
            // Two copies of one delivery answered in one batch (a re-read backlog row and its
            // first copy), and a retried one that ended in the same batch: one statement.
            try await store.journal.record([
                DeliveryRecord(deviceRef: refs[0], position: 1, messageId: id, userId: "u1", state: .pending, attempts: 1, lastError: "503"),
                DeliveryRecord(
                    deviceRef: refs[0], position: 1, messageId: id, userId: "u1", state: .sent, attempts: 2, payload: Array("first".utf8),
                    completesPendingRow: true),
                DeliveryRecord(
                    deviceRef: refs[0], position: 1, messageId: id, userId: "u1", state: .failed, attempts: 3, lastError: "late",
                    completesPendingRow: true),
                DeliveryRecord(deviceRef: refs[1], position: 1, messageId: id, userId: "u1", state: .deferred, attempts: 1, lastError: "breaker"),
                DeliveryRecord(deviceRef: refs[1], position: 1, messageId: id, userId: "u1", state: .pending, attempts: 2, lastError: "503"),
            ])
            let statuses = try await store.journal.deliveries(ofMessage: MessageKey(text: "m1"))
            #expect(statuses.map(\.state) == [.sent, .pending])
            #expect(statuses.map(\.attempts) == [2, 2])
        }
    }

    @Test func historyTellsWhatWasRecordedForAKnownMessage() async throws {
        try await TestStore.with { store, _ in
            let refs = try await Self.devices(store, ["d1", "d2", "d3"])
            let answer = try await store.journal.claim(Self.batch(["m1"], refs.map { (0, $0) }))
            let id = try #require(answer.messageIds[0])
            try await store.journal.record([
                Self.sent(refs[0], 1, message: id, payload: #"{"aps":{"alert":"1"}}"#),
                DeliveryRecord(deviceRef: refs[1], position: 1, messageId: id, userId: "u1", state: .pending, attempts: 2, lastError: "503"),
            ])
            #expect(try await store.journal.claim(Self.batch(["m1"], [(0, refs[0])])).messageIds == [nil])
            let history = try #require(try await store.journal.history(of: [MessageKey(text: "m1"), MessageKey(text: "unknown")]).first)
            #expect(history.id == id && history.key == MessageKey(text: "m1"))
            #expect(
                Set(history.deliveries) == [
                    MessageHistory.Recorded(deviceRef: refs[0], userId: "u1", position: 1, state: .sent, attempts: 1),
                    MessageHistory.Recorded(deviceRef: refs[1], userId: "u1", position: 1, state: .pending, attempts: 2),
                ])
            #expect(try await store.journal.history(of: [MessageKey(text: "unknown")]).isEmpty)

            // The retried one ends: its pending row is completed; a terminal row is final.
            try await store.journal.record([
                DeliveryRecord(
                    deviceRef: refs[1], position: 1, messageId: id, userId: "u1", state: .sent, attempts: 3,
                    payload: Array("{}".utf8), completesPendingRow: true)
            ])
            try await store.journal.record([
                DeliveryRecord(
                    deviceRef: refs[1], position: 1, messageId: id, userId: "u1", state: .failed, attempts: 9,
                    lastError: "late", completesPendingRow: true)
            ])
            // Recording the same outcome twice (its answer was lost) changes nothing.
            try await store.journal.record([Self.sent(refs[0], 1, message: id, payload: "again")])
            let statuses = try await store.journal.deliveries(ofMessage: MessageKey(text: "m1"))
            #expect(statuses.map(\.state) == [.sent, .sent])
            #expect(statuses.map(\.attempts) == [1, 3])
            #expect(statuses.first?.deliveryKey == DeliveryKey(messageKey: "m1", deviceId: "d1", userId: "u1"))
            #expect(statuses.first?.deviceId == "d1" && statuses.first?.eventId == "E")
            let log = try await store.notificationLog.entries(deviceId: "d1", after: 0)
            #expect(log.map(\.payload) == [#"{"aps":{"alert":"1"}}"#])
            #expect(log.first?.deliveryKey == DeliveryKey(messageKey: "m1", deviceId: "d1", userId: "u1"))
        }
    }

    /// In-doubt deliveries are looked up by message and device: only their own rows come back,
    /// not the rest of their message's, nor another message's row for the same device.
    @Test func recordedFindsTheRowsOfTheNamedDeliveriesOnly() async throws {
        try await TestStore.with { store, _ in
            let refs = try await Self.devices(store, ["d1", "d2", "d3"])
            let answer = try await store.journal.claim(Self.batch(["m1", "m2"], refs.map { (0, $0) } + [(1, refs[0])]))
            let (first, second) = (try #require(answer.messageIds[0]), try #require(answer.messageIds[1]))
            try await store.journal.record([
                Self.sent(refs[0], 1, message: first, payload: "{}"), Self.sent(refs[1], 1, message: first, payload: "{}"),
                Self.sent(refs[2], 1, message: first, payload: "{}"), Self.sent(refs[0], 2, message: second, payload: "{}"),
            ])
            let recorded = try await store.journal.recorded(messageIds: [first, first, second, second], deviceRefs: [refs[1], refs[1], refs[0], refs[2]])
            #expect(recorded[first] == [MessageHistory.Recorded(deviceRef: refs[1], userId: "u1", position: 1, state: .sent, attempts: 1)])
            #expect(recorded[second] == [MessageHistory.Recorded(deviceRef: refs[0], userId: "u1", position: 2, state: .sent, attempts: 1)])
            #expect(try await store.journal.recorded(messageIds: [], deviceRefs: []).isEmpty)
        }
    }

    /// A message without message-id is keyed by its body's SHA-256: kept as 32 bytes, read back
    /// as the same hex text (the collapse ids are made of it).
    @Test func bodyHashKeysAreStoredAsBytesAndReadBackAsText() async throws {
        try await TestStore.with { store, database in
            let refs = try await Self.devices(store, ["d1"])
            let hex = DeliveryKey.messageKey(forBody: Array("<PushNotification/>".utf8))
            let answer = try await store.journal.claim(ClaimBatch(messages: [MessageKey(text: hex)], deliveries: [.init(message: 0, deviceRef: refs[0])]))
            try await store.journal.record([Self.sent(refs[0], try #require(answer.positions[0]), message: try #require(answer.messageIds[0]))])
            let stored = try await database.admin.query("SELECT key_text IS NULL, octet_length(key_hash) FROM messages")
            #expect(try stored.first?.decode(Bool.self, at: 0) == true)
            #expect(try stored.first?.decode(Int.self, at: 1) == 32)
            #expect(
                try await store.journal.deliveries(ofMessage: MessageKey(text: hex)).map(\.deliveryKey) == [
                    DeliveryKey(messageKey: hex, deviceId: "d1", userId: "u1")
                ])
            #expect(
                try await store.notificationLog.entries(deviceId: "d1", after: 0).map(\.deliveryKey) == [
                    DeliveryKey(messageKey: hex, deviceId: "d1", userId: "u1")
                ])
            // Upper-case or short hex is not a body hash: kept as text.
            #expect(MessageKey(text: hex.uppercased()).stored.text != nil)
            #expect(MessageKey(text: "abc").stored.hash == nil)
            for (index, byte) in ["g", "/", ":", "`", "G", " "].enumerated() {
                var digits = Array(hex)
                digits[index * 9] = Character(byte)
                #expect(MessageKey(text: String(digits)).stored.hash == nil, "\(byte) at \(index * 9)")
            }
            #expect(MessageKey(text: hex).stored.hash?.count == 32)
        }
    }

    @Test func partitionCopiesOfOneMessageAreApart() async throws {
        try await TestStore.with { store, _ in
            let refs = try await Self.devices(store, ["d1"])
            let copies = [MessageKey(text: "m1", partitionSuffix: "#p0/2"), MessageKey(text: "m1", partitionSuffix: "#p1/2")]
            let answer = try await store.journal.claim(ClaimBatch(messages: copies, deliveries: [.init(message: 0, deviceRef: refs[0])]))
            #expect(answer.messageIds.allSatisfy { $0 != nil })
            #expect(copies[0].digest != MessageKey(text: "m1").digest)
        }
    }

    /// Claims over the same devices from three tasks, in opposite orders: each device's
    /// positions stay unique and consecutive (deadlocks, if the database reports one, are
    /// retried by the caller as any transient error).
    @Test func concurrentClaimsOverSharedDevicesNeverRepeatOrSkipPositions() async throws {
        try await TestStore.with(configure: { $0.database.poolSize = 4 }) { store, _ in
            let names = (0..<40).map { "d\($0)" }
            try await store.devices.importDevices(names.map { StoreFixture.registration($0, user: "u-\($0)") })
            var refs: [Int64] = []
            for name in names { refs.append(try #require(try await store.devices.storeId(deviceId: name))) }
            let rounds = 15
            let deviceRefs = refs
            let positions = try await withThrowingTaskGroup(of: [(Int64, Int64)].self) { group in
                for lane in 0..<3 {
                    group.addTask {
                        var got: [(Int64, Int64)] = []
                        for round in 0..<rounds {
                            let devices = lane % 2 == 1 ? deviceRefs.reversed() : deviceRefs
                            let batch = Self.batch(["lane\(lane)-round\(round)"], devices.map { (0, $0) })
                            var answer: ClaimAnswer?
                            for _ in 0..<10 where answer == nil {
                                do { answer = try await store.journal.claim(batch) } catch let error as StoreError where error.isTransient { continue }
                            }
                            let claimed = try #require(answer)
                            for (device, position) in zip(devices, claimed.positions) { got.append((device, try #require(position))) }
                        }
                        return got
                    }
                }
                var all: [(Int64, Int64)] = []
                for try await part in group { all += part }
                return all
            }
            for ref in refs {
                let mine = positions.filter { $0.0 == ref }.map(\.1).sorted()
                #expect(mine == Array(1...Int64(3 * rounds)))
            }
        }
    }

    @Test func tokenDeadRecordKillsOnlyTheSameToken() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1", token: "T1"))
            try await store.devices.subscribe(StoreFixture.registration("d2", user: "u1", token: "T2"))
            let d1 = try #require(try await store.devices.storeId(deviceId: "d1")), d2 = try #require(try await store.devices.storeId(deviceId: "d2"))
            let answer = try await store.journal.claim(Self.batch(["m1"], [(0, d1), (0, d2)]))
            let id = try #require(answer.messageIds[0])
            try await store.devices.setToken("T2-refreshed", deviceId: "d2")
            try await store.journal.record([
                DeliveryRecord(deviceRef: d1, position: 1, messageId: id, userId: "u1", state: .tokenDead, attempts: 1, lastError: "Unregistered", token: "T1"),
                DeliveryRecord(deviceRef: d2, position: 1, messageId: id, userId: "u1", state: .tokenDead, attempts: 1, lastError: "Unregistered", token: "T2"),
            ])
            #expect(try await store.devices.device(id: "d1")?.tokenState == .dead)
            #expect(try await store.devices.device(id: "d1")?.tokenDeadReason == "Unregistered")
            #expect(try await store.devices.device(id: "d2")?.tokenState == .active)
            let statuses = try await store.journal.deliveries(ofMessage: MessageKey(text: "m1"))
            #expect(statuses.map(\.state) == [.tokenDead, .tokenDead])
            #expect(statuses.map(\.lastError) == ["Unregistered", "Unregistered"])
            #expect(try await store.devices.subscriptions(forUsers: ["u1"]).map(\.deviceId) == ["d2"])
        }
    }

    @Test func expireForgetsOldDeliveriesAndMessages() async throws {
        try await TestStore.with { store, database in
            let refs = try await Self.devices(store, ["d1"])
            let answer = try await store.journal.claim(Self.batch(["old", "young"], [(0, refs[0]), (1, refs[0])]))
            try await store.journal.record([
                Self.sent(refs[0], 1, message: try #require(answer.messageIds[0])), Self.sent(refs[0], 2, message: try #require(answer.messageIds[1])),
            ])
            try await database.admin.execute("UPDATE journal SET recorded_at = now() - interval '60 days' WHERE position = 1")
            try await database.admin.execute("UPDATE messages SET received_at = now() - interval '60 days' WHERE key_text = 'old'")
            let expired = try await store.journal.expire()
            #expect(expired.deliveries == 1 && expired.messages == 1)
            #expect(try await store.journal.deliveries(ofMessage: MessageKey(text: "old")).isEmpty)
            #expect(try await store.journal.deliveries(ofMessage: MessageKey(text: "young")).count == 1)
            // A message forgotten is new again.
            #expect(try await store.journal.claim(Self.batch(["old"], [])).messageIds.allSatisfy { $0 != nil })
        }
    }

    @Test func aBodySharedByThreeOrMoreDeliveriesIsStoredOncePerMessage() async throws {
        try await TestStore.with { store, database in
            let refs = try await Self.devices(store, ["d1", "d2", "d3", "d4", "d5"])
            let answer = try await store.journal.claim(Self.batch(["b", "t"], refs.map { (0, $0) } + [(1, refs[0]), (1, refs[1])]))
            let (b, t) = (try #require(answer.messageIds[0]), try #require(answer.messageIds[1]))
            let shared = #"{"aps":{"alert":"всем"}}"#
            // b: four devices get one body, d5 another; t: two deliveries, below the threshold.
            let records =
                refs.prefix(4).map { Self.sent($0, 1, message: b, payload: shared) } + [
                    Self.sent(refs[4], 1, message: b, payload: "{}"), Self.sent(refs[0], 2, message: t, payload: shared),
                    Self.sent(refs[1], 2, message: t, payload: shared),
                ]
            try await store.journal.record(records)
            // Recorded again (its first answer lost): the rows and the body stay as they are.
            try await store.journal.record(records)

            let rows = try await database.admin.query(
                "SELECT count(*) FILTER (WHERE payload IS NULL AND payload_digest IS NOT NULL), count(*) FILTER (WHERE payload IS NOT NULL AND payload_digest IS NULL), (SELECT count(*) FROM message_payloads) FROM journal"
            )
            #expect(try rows.first?.decode(Int.self, at: 0) == 4)
            #expect(try rows.first?.decode(Int.self, at: 1) == 3)
            #expect(try rows.first?.decode(Int.self, at: 2) == 1)
            for id in ["d1", "d2", "d3", "d4"] {
                #expect(try await store.notificationLog.entries(deviceId: id, after: 0).first?.payload == shared, "\(id)")
                #expect(try await store.notificationLog.count(deviceId: id, after: 0) == (id == "d1" || id == "d2" ? 2 : 1))
            }
            #expect(try await store.notificationLog.entries(deviceId: "d5", after: 0).map(\.payload) == ["{}"])
        }
    }

    @Test func completedRetriedRowsShareTheirBody() async throws {
        try await TestStore.with { store, database in
            let refs = try await Self.devices(store, ["d1", "d2", "d3"])
            let id = try #require(try await store.journal.claim(Self.batch(["b"], refs.map { (0, $0) })).messageIds[0])
            try await store.journal.record(
                refs.map { DeliveryRecord(deviceRef: $0, position: 1, messageId: id, userId: "0", state: .pending, attempts: 1, lastError: "503") })
            try await store.journal.record(
                refs.map {
                    DeliveryRecord(
                        deviceRef: $0, position: 1, messageId: id, userId: "0", state: .sent, attempts: 2, payload: Array("{}".utf8), completesPendingRow: true)
                })
            let rows = try await database.admin.query("SELECT count(*) FROM journal WHERE state = 'sent' AND payload IS NULL AND payload_digest IS NOT NULL")
            #expect(try rows.first?.decode(Int.self, at: 0) == 3)
            #expect(try await store.notificationLog.entries(deviceId: "d3", after: 0).map(\.payload) == ["{}"])
        }
    }

    @Test func aMessageOutlivesItsDeliveriesAndTakesItsSharedBodies() async throws {
        try await TestStore.with { store, database in
            let refs = try await Self.devices(store, ["d1", "d2", "d3"])
            let id = try #require(try await store.journal.claim(Self.batch(["b"], refs.map { (0, $0) })).messageIds[0])
            try await store.journal.record(refs.map { Self.sent($0, 1, message: id) })
            try await database.admin.execute("UPDATE messages SET received_at = now() - interval '60 days'")
            // Its deliveries are still logged: the message stays.
            let kept = try await store.journal.expire()
            #expect(kept.deliveries == 0 && kept.messages == 0)
            #expect(try await store.notificationLog.entries(deviceId: "d2", after: 0).map(\.payload) == ["{}"])

            try await database.admin.execute("UPDATE journal SET recorded_at = now() - interval '60 days'")
            let expired = try await store.journal.expire()
            #expect(expired.deliveries == 3 && expired.messages == 1)
            let left = try await database.admin.query("SELECT count(*) FROM message_payloads")
            #expect(try left.first?.decode(Int.self, at: 0) == 0)
        }
    }
}
