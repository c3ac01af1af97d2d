import HeraldPostgres
import HeraldTesting
import Testing

@Suite("Migration runner")
struct MigrationRunnerTests {
    static let migrations = [
        Migration(
            version: 1, name: "create devices",
            sql: """
                CREATE TABLE devices (id bigserial PRIMARY KEY, token text NOT NULL UNIQUE);
                CREATE INDEX devices_token_idx ON devices (token);
                """),
        Migration(version: 2, name: "add tags", sql: "ALTER TABLE devices ADD COLUMN tags text[] NOT NULL DEFAULT '{}'"),
        // Not idempotent on purpose: applying it twice would insert a second row.
        Migration(version: 3, name: "seed", sql: "INSERT INTO devices (token) VALUES ('seed-token')"),
    ]

    @Test func appliesInOrderAndSecondRunIsANoOp() async throws {
        try await TestDatabase.with { client, _ in
            let runner = try MigrationRunner(migrations: Self.migrations.reversed())
            #expect(try await runner.appliedMigrations(on: client).isEmpty)
            let first = try await runner.migrate(on: client)
            #expect(first.map(\.version) == [1, 2, 3])
            let second = try await runner.migrate(on: client)
            #expect(second.isEmpty)
            let applied = try await runner.appliedMigrations(on: client)
            #expect(applied.map(\.version) == [1, 2, 3])
            #expect(applied.map(\.checksum) == Self.migrations.map(\.checksum))
            #expect(applied.map(\.name) == Self.migrations.map(\.name))
            #expect(try await client.query("SELECT count(*) FROM devices").first?.decode(Int.self, at: 0) == 1)

            // A new release adds migration 4: only it runs.
            let extended = try MigrationRunner(
                migrations: Self.migrations + [
                    Migration(version: 4, name: "more", sql: "ALTER TABLE devices ADD COLUMN culture text")
                ])
            #expect(try await extended.migrate(on: client).map(\.version) == [4])
            #expect(try await extended.migrate(on: client).isEmpty)
        }
    }

    @Test func editedAppliedMigrationIsRefused() async throws {
        try await TestDatabase.with { client, _ in
            try await MigrationRunner(migrations: Self.migrations).migrate(on: client)
            var edited = Self.migrations
            edited[1] = Migration(version: 2, name: "add tags", sql: "ALTER TABLE devices ADD COLUMN tags text[]")
            edited.append(Migration(version: 4, name: "never runs", sql: "CREATE TABLE never_created (id int)"))
            do {
                try await MigrationRunner(migrations: edited).migrate(on: client)
                Issue.record("an edited migration must be refused")
            } catch let error as PostgresError {
                #expect(error.code == .migrationChecksumMismatch)
                #expect(error.migrationVersion == 2)
            }
            let exists = try await client.query("SELECT to_regclass('never_created') IS NOT NULL").first?.decode(Bool.self, at: 0)
            #expect(exists == false)
        }
    }

    @Test func concurrentRunnersApplyEachMigrationOnce() async throws {
        try await TestDatabase.with { _, database in
            // Four "processes", each with its own client, start at once.
            let clients = try (0..<4).map { _ in try PostgresClient(configuration: database.configuration) }
            let results = try await withThrowingTaskGroup(of: [Int].self) { group in
                for client in clients {
                    group.addTask {
                        try await MigrationRunner(migrations: Self.migrations).migrate(on: client).map(\.version)
                    }
                }
                var all: [[Int]] = []
                for try await result in group { all.append(result) }
                return all
            }
            for client in clients { await client.close() }
            #expect(results.flatMap { $0 }.sorted() == [1, 2, 3])
            for result in results { #expect(result == result.sorted()) }
            #expect(try await database.admin.query("SELECT count(*) FROM devices").first?.decode(Int.self, at: 0) == 1)
            #expect(try await database.admin.query("SELECT count(*) FROM herald_schema_migrations").first?.decode(Int.self, at: 0) == 3)
        }
    }

    @Test func failingMigrationIsRolledBackAndReported() async throws {
        try await TestDatabase.with { client, _ in
            let broken = [
                Self.migrations[0],
                Migration(
                    version: 2, name: "half broken",
                    sql: """
                        CREATE TABLE partial (id int);
                        INSERT INTO no_such_table VALUES (1);
                        """),
            ]
            do {
                try await MigrationRunner(migrations: broken).migrate(on: client)
                Issue.record("the broken migration must fail")
            } catch let error as PostgresError {
                #expect(error.code == .migrationFailed)
                #expect(error.migrationVersion == 2)
                #expect(error.sqlState == "42P01")
            }
            let runner = try MigrationRunner(migrations: broken)
            #expect(try await runner.appliedMigrations(on: client).map(\.version) == [1])
            #expect(try await client.query("SELECT to_regclass('partial') IS NULL").first?.decode(Bool.self, at: 0) == true)
        }
    }

    @Test func invalidListsAreRejected() {
        #expect(throws: PostgresError.self) {
            try MigrationRunner(migrations: [Migration(version: 1, name: "a", sql: ""), Migration(version: 1, name: "b", sql: "")])
        }
        #expect(throws: PostgresError.self) { try MigrationRunner(migrations: [Migration(version: 0, name: "a", sql: "")]) }
    }
}
