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
        try await TestStore.with(configure: { $0.maintenanceInterval = .seconds(1) }) { store, database in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            try await JournalSeed.record(store, deviceId: "d1", userId: "u1", messageKeys: ["m1"])
            try await database.admin.execute("UPDATE messages SET received_at = now() - interval '100 days'")
            try await database.admin.execute("UPDATE journal SET recorded_at = now() - interval '100 days'")

            store.start()
            store.start()  // a second start is a no-op
            try await waitUntil("maintenance to expire the rows", timeout: .seconds(10)) {
                let rows = try await database.admin.query("SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM journal)")
                return try rows.first?.decode(Int.self, at: 0) == 0
            }
            await store.stop()
            await store.stop()
            let expired = try await store.expire()
            #expect(expired.deliveries + expired.messages == 0)
        }
    }

    @Test func aClosedStoreRefusesWork() async throws {
        try await TestStore.with { store, _ in
            await store.close()
            do {
                _ = try await store.journal.history(of: [MessageKey(text: "k")])
                Issue.record("a closed store must refuse work")
            } catch let error as StoreError {
                #expect(error.code == .closed)
                #expect(!error.isTransient)
            }
        }
    }
}
