import HeraldCore
import HeraldPostgres
import HeraldTesting
import Testing

@testable import HeraldStore

@Suite("Store migrations")
struct MigrationTests {
    @Test func applyOnAnEmptyDatabaseAndAgainAsANoOp() async throws {
        try await TestStore.with(migrate: false) { store, database in
            await #expect(throws: StoreError.self) { try await store.checkHealth() }
            #expect(try await store.migrate() == Store.migrations.map(\.version))
            #expect(try await store.migrate() == [])
            try await store.checkHealth()

            let tables = try await database.admin.query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
            ).map { (row) throws(PostgresError) in try row.decode(String.self, at: 0) }
            #expect(
                tables == [
                    "backlog", "backlog_holder", "broadcasts", "dead_letters", "device_positions", "device_reads", "device_users", "devices", "event_metadata",
                    "herald_schema_migrations",
                    "journal",
                    "message_payloads", "messages", "templates", "user_settings",
                ])
            // The position counters prune their pages only when a tenth is left (version 6).
            let options = try await database.admin.query("SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname = 'device_positions'")
            #expect(try options.first?.decode(String.self, at: 0) == "fillfactor=90")
        }
    }

    @Test func healthCheckNamesMissingMigrations() async throws {
        try await TestStore.with(migrate: false) { store, _ in
            do {
                try await store.checkHealth()
                Issue.record("an unmigrated database must fail the health check")
            } catch let error as StoreError {
                #expect(error.code == .schemaMismatch)
                #expect(!error.isTransient)
                #expect(error.description.contains("herald migrate"))
            }
        }
    }

    @Test func migrationsAreEmbeddedAndNumbered() {
        let migrations = Store.migrations
        #expect(migrations.first?.version == 1)
        #expect(migrations.map(\.version) == Array(1...migrations.count))
        #expect(migrations[0].sql.contains("CREATE TABLE deliveries"))
        #expect(migrations[1].sql.contains("CREATE TABLE journal"))
    }

    /// A database of version 1 with data: after the upgrade, apps still fetch their logs (same
    /// collapse ids), a redelivered message still finds what was sent and what is in doubt, and
    /// AvoidDublication keys are still remembered.
    @Test func upgradeFromVersionOneKeepsLogsJournalAndDedupeKeys() async throws {
        try await TestStore.with(migrate: false) { store, database in
            _ = try await MigrationRunner(migrations: [Store.migrations[0]]).migrate(on: database.admin)
            try await database.admin.execute(
                "INSERT INTO devices (device_id, platform, token, culture) VALUES ('d1', 'ios', 't1', 'ru-RU'), ('d2', 'android', 't2', 'ru-RU')"
            )
            _ = try await database.admin.query(
                "SELECT * FROM herald_claim_deliveries(ARRAY['k1', 'k2'], ARRAY['m1', 'm1'], ARRAY['u1', 'u1'], ARRAY['default', 'default'], ARRAY['d1', 'd2'])"
            )
            _ = try await database.admin.query(
                "SELECT herald_record_deliveries(ARRAY['k1'], ARRAY['sent'], ARRAY[1::bigint], ARRAY[NULL], ARRAY['E'], ARRAY['{\"a\":1}'], ARRAY[NULL], 3600)"
            )
            try await database.admin.execute("INSERT INTO dedupe_keys VALUES ('m9', now(), now() + interval '1 day')")

            #expect(try await store.migrate() == Array(Store.migrations.map(\.version).dropFirst()))
            let log = try await store.notificationLog.entries(deviceId: "d1", after: 0)
            #expect(log.map(\.payload) == [#"{"a":1}"#])
            #expect(log.map(\.deliveryKey.rawValue) == ["k1"])
            let d1 = try #require(try await store.devices.storeId(deviceId: "d1")), d2 = try #require(try await store.devices.storeId(deviceId: "d2"))
            let history = try #require(try await store.journal.history(of: [MessageKey(text: "m1")]).first)
            #expect(
                Set(history.deliveries) == [
                    MessageHistory.Recorded(deviceRef: d1, userId: "u1", position: 1, state: .sent, attempts: 1),
                    MessageHistory.Recorded(deviceRef: d2, userId: "u1", position: 1, state: .pending, attempts: 0),
                ])
            #expect(try await store.journal.claim(ClaimBatch(messages: [MessageKey(text: "m9")])).messageIds == [nil])
            // Numbering goes on where version 1 left it.
            #expect(try await store.journal.reservePositions([d1]) == [2])
        }
    }
}
