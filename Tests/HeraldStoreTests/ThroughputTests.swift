import Foundation
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

/// The hot path's batched operations at volume: they must give the right answers for thousands
/// of rows, and their rates are printed for the record. Rates are not asserted: speed is judged
/// by `herald bench`, not by a timed test on a machine running the whole suite at once.
@Suite("Store throughput")
struct ThroughputTests {
    static let batchSize = 200
    static let devices = 2_000

    @Test func batchedClaimAndRecordAtVolume() async throws {
        try await TestStore.with(configure: { $0.database.poolSize = 4 }) { store, database in
            try await store.devices.importDevices((0..<Self.devices).map { StoreFixture.registration("d\($0)", user: "u\($0)") })
            var refs: [Int64] = []
            for n in 0..<Self.devices { refs.append(try #require(try await store.devices.storeId(deviceId: "d\(n)"))) }
            let synchronousCommit = try await database.admin.query("SHOW synchronous_commit").first?.decode(String.self, at: 0) ?? "?"
            let payload = Array(#"{"aps":{"alert":{"title":"Перевод","body":"Вам перевели 1 000,00 ₽ от Иван И."}},"acme_eid":"TransferIssued"}"#.utf8)

            // Each message goes to 4 devices (consecutive), so batches mix devices.
            func batch(_ b: Int, prefix: String) -> ClaimBatch {
                var batch = ClaimBatch()
                for m in 0..<(Self.batchSize / 4) {
                    batch.messages.append(MessageKey(text: "\(prefix)-m\(b)-\(m)"))
                    for i in 0..<4 { batch.deliveries.append(.init(message: m, deviceRef: refs[((b * 50 + m) * 7 + i) % Self.devices])) }
                }
                return batch
            }

            var records: [DeliveryRecord] = []
            var start = ContinuousClock.now
            for b in 0..<60 {
                let claim = batch(b, prefix: "seq")
                let answer = try await store.journal.claim(claim)
                #expect(answer.messageIds.allSatisfy { $0 != nil })
                #expect(answer.positions.allSatisfy { $0 != nil })
                for (index, delivery) in claim.deliveries.enumerated() {
                    records.append(
                        DeliveryRecord(
                            deviceRef: delivery.deviceRef, position: answer.positions[index]!, messageId: answer.messageIds[delivery.message]!, userId: "u",
                            state: .sent, attempts: 1, payload: payload
                        ))
                }
            }
            let claimRate = rate(60 * Self.batchSize, ContinuousClock.now - start)
            start = ContinuousClock.now
            for offset in stride(from: 0, to: records.count, by: Self.batchSize) {
                try await store.journal.record(Array(records[offset..<min(records.count, offset + Self.batchSize)]))
            }
            let recordRate = rate(records.count, ContinuousClock.now - start)

            // Every device's positions are unique and consecutive, and every row was written.
            let irregular = try await database.admin.query(
                """
                SELECT count(*) FROM (
                    SELECT count(DISTINCT position) AS n, min(position) AS low, max(position) AS high FROM journal GROUP BY device_ref
                ) p WHERE low <> 1 OR high <> n
                """
            )
            #expect(try irregular.first?.decode(Int.self, at: 0) == 0)
            #expect(try await database.admin.query("SELECT count(*) FROM journal").first?.decode(Int.self, at: 0) == records.count)

            // The subscription cache on a hit (no database).
            let users = (0..<Self.batchSize).map { "u\($0)" }
            store.subscriptionCache.setLive(true)
            _ = try await store.subscriptionCache.subscriptions(forUsers: users)
            start = ContinuousClock.now
            for _ in 0..<200 { _ = try await store.subscriptionCache.subscriptions(forUsers: users) }
            let cacheRate = rate(200 * users.count, ContinuousClock.now - start)

            print(
                """
                HeraldStore throughput (batches of \(Self.batchSize), synchronous_commit=\(synchronousCommit), PostgreSQL on the same 2 cores):
                  DeliveryJournal.claim   \(claimRate) deliveries/s (one batch at a time)
                  DeliveryJournal.record  \(recordRate) deliveries/s (one batch at a time, sent, with the payload)
                  SubscriptionCache hits: \(cacheRate) users/s
                """)
        }
    }

    /// What counting the unread badge adds to the claim statement (ClaimBatch.countsUnread):
    /// claims of 200 deliveries, interleaved with and without counting, over devices of which
    /// half reported a read and a tenth are shared by two users. Medians are printed.
    @Test func claimWithAndWithoutUnreadCounts() async throws {
        try await TestStore.with { store, database in
            var registrations = (0..<Self.devices).map { StoreFixture.registration("d\($0)", user: "u\($0)") }
            registrations += (0..<(Self.devices / 10)).map { StoreFixture.registration("d\($0 * 10)", user: "w\($0)") }
            try await store.devices.importDevices(registrations)
            var refs: [Int64] = []
            for n in 0..<Self.devices { refs.append(try #require(try await store.devices.storeId(deviceId: "d\(n)"))) }
            func batch(_ b: Int, counts: Bool) -> ClaimBatch {
                var batch = ClaimBatch(countsUnread: counts)
                for m in 0..<(Self.batchSize / 4) {
                    batch.messages.append(MessageKey(text: "\(counts)-m\(b)-\(m)"))
                    for i in 0..<4 {
                        let n = ((b * 50 + m) * 7 + i) % Self.devices
                        batch.deliveries.append(.init(message: m, deviceRef: refs[n], userId: "u\(n)"))
                    }
                }
                return batch
            }
            // A journal to count in: 20 claimed and recorded batches, then reads for half the devices.
            for b in 0..<20 {
                let claim = batch(1000 + b, counts: false)
                let answer = try await store.journal.claim(claim)
                try await store.journal.record(
                    claim.deliveries.indices.map { index in
                        let delivery = claim.deliveries[index]
                        return DeliveryRecord(
                            deviceRef: delivery.deviceRef, position: answer.positions[index]!, messageId: answer.messageIds[delivery.message]!,
                            userId: delivery.userId, state: .sent, attempts: 1, payload: Array("{}".utf8)
                        )
                    })
            }
            try await database.admin.execute(
                "INSERT INTO device_reads (device_ref, user_id, position) SELECT d.id, u.user_id, 1 FROM devices d JOIN device_users u ON u.device_ref = d.id WHERE d.id % 2 = 0"
            )
            var plain: [Double] = []
            var counting: [Double] = []
            for b in 0..<60 {
                for counts in (b % 2 == 0 ? [false, true] : [true, false]) {
                    let claim = batch(b, counts: counts)
                    let start = ContinuousClock.now
                    let answer = try await store.journal.claim(claim)
                    let elapsed = ContinuousClock.now - start
                    let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
                    if counts {
                        counting.append(ms)
                        #expect(answer.unread.count == claim.deliveries.count && answer.unread.allSatisfy { $0 != nil && $0! >= 1 })
                        // A device of one user counts from its read (position 1, even store ids), or from 0
                        // without one. Every tenth device (that of u0, u10, …) is shared with a w user.
                        for (index, delivery) in claim.deliveries.enumerated() where !delivery.userId.hasSuffix("0") {
                            let position = try #require(answer.positions[index])
                            #expect(answer.unread[index] == Int(delivery.deviceRef % 2 == 0 ? position - 1 : position))
                        }
                    } else {
                        plain.append(ms)
                        #expect(answer.unread.isEmpty)
                    }
                }
            }
            func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
            print(
                String(
                    format: "DeliveryJournal.claim, %d deliveries: median %.2f ms without unread counts, %.2f ms with them (%d claims each, interleaved)",
                    Self.batchSize, median(plain), median(counting), plain.count
                ))
        }
    }
}
