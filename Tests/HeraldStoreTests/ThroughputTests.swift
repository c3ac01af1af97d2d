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
        try await StoreFixture.with(configure: { $0.database.poolSize = 4 }) { store, database in
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
                    records.append(DeliveryRecord(
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

            print("""
                HeraldStore throughput (batches of \(Self.batchSize), synchronous_commit=\(synchronousCommit), PostgreSQL on the same 2 cores):
                  DeliveryJournal.claim   \(claimRate) deliveries/s (one batch at a time)
                  DeliveryJournal.record  \(recordRate) deliveries/s (one batch at a time, sent, with the payload)
                  SubscriptionCache hits: \(cacheRate) users/s
                """)
        }
    }
}
