import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

/// The hot path's batched operations at volume: they must give the right answers for thousands
/// of rows, and their rates are printed for the record (target on the 2-core box: ≥ 20,000
/// claims/s and records/s in batches of 200, release build). Rates are not asserted: speed is
/// judged by `herald bench`, not by a timed test on a machine running the whole suite at once.
@Suite("Store throughput")
struct ThroughputTests {
    static let batchSize = 200
    static let devices = 2_000

    @Test func batchedClaimRecordAndDedupeRates() async throws {
        try await StoreFixture.with(configure: { $0.database.poolSize = 4 }) { store, database in
            try await store.devices.importDevices((0..<Self.devices).map { StoreFixture.registration("d\($0)", user: "u\($0)") })
            let synchronousCommit = try await database.admin.query("SHOW synchronous_commit").first?.decode(String.self, at: 0) ?? "?"
            #if DEBUG
            let build = "debug build"
            #else
            let build = "release build"
            #endif
            let payload = #"{"aps":{"alert":{"title":"Перевод","body":"Вам перевели 1 000,00 ₽ от Иван И."},"thread-id":"transfers","mutable-content":1},"acme_eid":"TransferIssued","acme_pos":12}"#

            // Each message goes to 4 devices (consecutive), so batches mix devices.
            func batches(_ count: Int, prefix: String) -> [[DeliveryClaim]] {
                (0..<count).map { b in
                    (0..<Self.batchSize).map { i in
                        let n = b * Self.batchSize + i
                        let device = "d\((n / 4 * 7 + n % 4) % Self.devices)"
                        let message = "\(prefix)-m\(n / 4)"
                        return DeliveryClaim(
                            deliveryKey: DeliveryKey(messageKey: message, deviceId: device, userId: "u"), messageKey: message, userId: "u",
                            deviceId: device
                        )
                    }
                }
            }

            // Warm up (prepared statements, plan caches) outside the measurement.
            let warm = batches(2, prefix: "warm")
            for batch in warm { _ = try await store.journal.claim(batch) }

            let sequential = batches(60, prefix: "seq")
            var start = ContinuousClock.now
            for batch in sequential {
                let results = try await store.journal.claim(batch)
                #expect(results.allSatisfy { if case .fresh = $0 { true } else { false } })
            }
            let claimRate = rate(sequential.count * Self.batchSize, ContinuousClock.now - start)

            start = ContinuousClock.now
            for batch in sequential {
                let updated = try await store.journal.record(batch.map { .sent($0.deliveryKey, attempts: 1, eventId: "TransferIssued", payload: payload) })
                #expect(updated == batch.count)
            }
            let recordRate = rate(sequential.count * Self.batchSize, ContinuousClock.now - start)

            // Two batches in flight at once, as a worker with several lanes does.
            let parallel = batches(60, prefix: "par")
            start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<2 {
                    group.addTask {
                        for batch in stride(from: lane, to: parallel.count, by: 2).map({ parallel[$0] }) {
                            _ = try await store.journal.claim(batch)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let parallelClaimRate = rate(parallel.count * Self.batchSize, ContinuousClock.now - start)
            start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<2 {
                    group.addTask {
                        for batch in stride(from: lane, to: parallel.count, by: 2).map({ parallel[$0] }) {
                            try await store.journal.record(batch.map { .sent($0.deliveryKey, attempts: 1, eventId: "TransferIssued", payload: payload) })
                        }
                    }
                }
                try await group.waitForAll()
            }
            let parallelRecordRate = rate(parallel.count * Self.batchSize, ContinuousClock.now - start)

            let keys = (0..<(60 * Self.batchSize)).map { "event-\($0)" }
            start = ContinuousClock.now
            for offset in stride(from: 0, to: keys.count, by: Self.batchSize) {
                let answers = try await store.dedupe.firstSeen(Array(keys[offset..<(offset + Self.batchSize)]))
                #expect(answers.allSatisfy { $0 })
            }
            let dedupeRate = rate(keys.count, ContinuousClock.now - start)

            // The subscription cache on a hit (no database).
            let users = (0..<Self.batchSize).map { "u\($0)" }
            store.subscriptionCache.setLive(true)
            _ = try await store.subscriptionCache.subscriptions(forUsers: users)
            start = ContinuousClock.now
            for _ in 0..<200 { _ = try await store.subscriptionCache.subscriptions(forUsers: users) }
            let cacheRate = rate(200 * users.count, ContinuousClock.now - start)

            print("""
                HeraldStore throughput (\(build), batches of \(Self.batchSize), synchronous_commit=\(synchronousCommit), PostgreSQL on the same 2 cores):
                  DeliveryJournal.claim   one batch at a time: \(claimRate)/s; two batches in flight: \(parallelClaimRate)/s
                  DeliveryJournal.record  one batch at a time: \(recordRate)/s; two batches in flight: \(parallelRecordRate)/s (sent, with a notification-log entry each)
                  DedupeRepository.firstSeen one batch at a time: \(dedupeRate)/s
                  SubscriptionCache hits: \(cacheRate) users/s
                """)
            #expect(try await store.devices.device(id: "d0")?.nextPosition ?? 0 > 1)
        }
    }
}
