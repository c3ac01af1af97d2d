import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

@Suite("Store migrations")
struct MigrationTests {
    @Test func applyOnAnEmptyDatabaseAndAgainAsANoOp() async throws {
        try await StoreFixture.with(migrate: false) { store, database in
            await #expect(throws: StoreError.self) { try await store.checkHealth() }
            #expect(try await store.migrate() == Store.migrations.map(\.version))
            #expect(try await store.migrate() == [])
            try await store.checkHealth()

            let tables = try await database.admin.query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
            ).map { (row) throws(PostgresError) in try row.decode(String.self, at: 0) }
            #expect(tables == [
                "dead_letters", "dedupe_keys", "deliveries", "device_users", "devices", "event_metadata", "herald_schema_migrations",
                "notification_log", "templates", "user_settings",
            ])
        }
    }

    @Test func healthCheckNamesMissingMigrations() async throws {
        try await StoreFixture.with(migrate: false) { store, _ in
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
    }
}
