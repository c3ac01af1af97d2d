import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

@Suite("Store lifecycle")
struct StoreLifecycleTests {
    @Test func configurationIsValidated() throws {
        #expect(throws: StoreError.self) { try StoreConfiguration(databaseURL: "mysql://localhost/herald") }
        var configuration = try StoreConfiguration(databaseURL: "postgres://herald:secret@db.internal:5433/herald", poolSize: 7)
        #expect(configuration.database.poolSize == 7)
        #expect(configuration.database.port == 5433)
        configuration.dedupeRetention = .milliseconds(10)
        do {
            _ = try Store(configuration: configuration)
            Issue.record("a retention under one second must be refused")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(!error.description.contains("secret"))
        }
    }

    @Test func maintenanceDeletesExpiredRowsWhileStarted() async throws {
        try await StoreFixture.with(configure: { $0.maintenanceInterval = .seconds(1) }) { store, database in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            let claim = DeliveryJournalTests.claim("m1", "d1")
            _ = try await store.journal.claim([claim])
            try await store.journal.record([.sent(claim.deliveryKey, attempts: 1, eventId: "E", payload: "{}")])
            _ = try await store.dedupe.firstSeen(["event-1"])
            try await database.admin.execute("UPDATE dedupe_keys SET expires_at = now() - interval '1 second'")
            try await database.admin.execute("UPDATE notification_log SET expires_at = now() - interval '1 second'")
            try await database.admin.execute("UPDATE deliveries SET claimed_at = now() - interval '100 days'")

            store.start()
            store.start()  // a second start is a no-op
            try await waitUntil("maintenance to expire the rows", timeout: .seconds(10)) {
                let rows = try await database.admin.query(
                    "SELECT (SELECT count(*) FROM dedupe_keys) + (SELECT count(*) FROM notification_log) + (SELECT count(*) FROM deliveries)"
                )
                return try rows.first?.decode(Int.self, at: 0) == 0
            }
            await store.stop()
            await store.stop()
            let expired = try await store.expire()
            #expect(expired.dedupeKeys + expired.deliveries + expired.notifications == 0)
        }
    }

    @Test func aClosedStoreRefusesWork() async throws {
        try await StoreFixture.with { store, _ in
            await store.close()
            do {
                _ = try await store.dedupe.firstSeen(["k"])
                Issue.record("a closed store must refuse work")
            } catch let error as StoreError {
                #expect(error.code == .closed)
                #expect(!error.isTransient)
            }
        }
    }
}
