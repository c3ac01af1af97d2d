import Foundation
import Logging

/// Applies numbered ``Migration``s that a database has not applied yet, in ascending order,
/// each in its own transaction, and records them in `herald_schema_migrations`
/// (version, name, checksum, applied_at).
///
/// Concurrency: every step runs under a transaction-level advisory lock
/// (`pg_advisory_xact_lock`), and each migration's transaction re-checks whether it was
/// applied meanwhile, so several processes starting at once apply each migration exactly
/// once and in order. Because the lock belongs to the transaction, a connection lost midway
/// cannot leave a later step running unlocked. Running again is a no-op.
///
/// Safety: if an applied migration's SQL changed (its checksum differs), nothing runs and
/// ``PostgresError/Code/migrationChecksumMismatch`` is thrown. Applied versions unknown to
/// this list (a newer release ran) are logged and left alone.
public struct MigrationRunner: Sendable {
    /// The bookkeeping table, created in the connection's current schema.
    public static let tableName = "herald_schema_migrations"
    /// The advisory-lock key (per database): ASCII "HERALDMG".
    static let lockKey: Int64 = 0x4845_5241_4C44_4D47

    /// The migrations, sorted by version.
    public let migrations: [Migration]
    /// How long to wait for another process's migration step before giving up with
    /// ``PostgresError/Code/timeout``.
    public var lockTimeout: Duration
    private let logger: Logger

    /// - Throws: ``PostgresError/Code/invalidMigration`` for non-positive or duplicate
    ///   versions.
    public init(
        migrations: [Migration], lockTimeout: Duration = .seconds(60), logger: Logger = Logger(label: "herald.postgres.migrations")
    ) throws(PostgresError) {
        var seen = Set<Int>()
        for migration in migrations {
            guard migration.version > 0 else {
                var error = PostgresError(code: .invalidMigration, message: "migration versions must be positive")
                error.migrationVersion = migration.version
                throw error
            }
            guard seen.insert(migration.version).inserted else {
                var error = PostgresError(code: .invalidMigration, message: "migration version used twice")
                error.migrationVersion = migration.version
                throw error
            }
        }
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.lockTimeout = lockTimeout
        self.logger = logger
    }

    /// Applies the missing migrations and returns them (empty when up to date).
    /// - Throws: ``PostgresError``: `migrationChecksumMismatch`, `migrationFailed` (wrapping
    ///   the statement's error; that migration was rolled back, earlier ones stay), `timeout`,
    ///   or connection errors.
    @discardableResult
    public func migrate(on client: PostgresClient) async throws(PostgresError) -> [Migration] {
        do {
            return try await client.withConnection { connection in
                try await migrate(on: connection)
            }
        } catch {
            throw Self.postgresError(error)
        }
    }

    /// The migrations recorded in the database (empty if the table does not exist yet).
    /// - Throws: ``PostgresError``.
    public func appliedMigrations(on client: PostgresClient) async throws(PostgresError) -> [AppliedMigration] {
        let exists = try await client.query("SELECT to_regclass($1) IS NOT NULL", [Self.tableName])
        guard try exists.first?.decode(Bool.self, at: 0) == true else { return [] }
        return try await Self.readApplied(client)
    }

    private func migrate(on connection: PostgresConnection) async throws -> [Migration] {
        // Step 1, under the lock: create the table, read what is applied, verify checksums.
        let pending: [Migration] = try await connection.withTransaction { transaction in
            try await lock(transaction)
            try await transaction.executeScript(
                """
                CREATE TABLE IF NOT EXISTS \(Self.tableName) (
                    version bigint PRIMARY KEY,
                    name text NOT NULL,
                    checksum text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """
            )
            let applied = try await Self.readApplied(transaction)
            let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
            for record in applied {
                guard let migration = known[record.version] else {
                    logger.warning(
                        "The database has a migration this release does not know",
                        metadata: ["herald.migration.version": "\(record.version)", "herald.migration.name": "\(record.name)"]
                    )
                    continue
                }
                try Self.verify(migration, against: record)
            }
            let appliedVersions = Set(applied.map(\.version))
            return migrations.filter { !appliedVersions.contains($0.version) }
        }

        // Step 2: one transaction per migration, each re-checking under the lock.
        var appliedNow: [Migration] = []
        for migration in pending {
            let didApply: Bool = try await connection.withTransaction { transaction in
                try await lock(transaction)
                let existing = try await transaction.query(
                    "SELECT version, name, checksum, applied_at FROM \(Self.tableName) WHERE version = $1",
                    [migration.version]
                )
                if let row = existing.first {
                    try Self.verify(migration, against: try Self.record(row))
                    return false
                }
                do throws(PostgresError) {
                    try await transaction.executeScript(migration.sql)
                } catch {
                    var wrapped = PostgresError(
                        code: .migrationFailed, message: "migration \(migration.version) \"\(migration.name)\" failed",
                        sqlState: error.sqlState, underlying: error
                    )
                    wrapped.migrationVersion = migration.version
                    throw wrapped
                }
                try await transaction.execute(
                    "INSERT INTO \(Self.tableName) (version, name, checksum) VALUES ($1, $2, $3)",
                    [migration.version, migration.name, migration.checksum]
                )
                return true
            }
            if didApply {
                logger.info(
                    "Applied migration",
                    metadata: ["herald.migration.version": "\(migration.version)", "herald.migration.name": "\(migration.name)"]
                )
                appliedNow.append(migration)
            }
        }
        return appliedNow
    }

    /// Takes the transaction-level advisory lock, waiting at most ``lockTimeout``.
    private func lock(_ transaction: PostgresTransaction) async throws(PostgresError) {
        let milliseconds = max(1, lockTimeout.components.seconds * 1000 + lockTimeout.components.attoseconds / 1_000_000_000_000_000)
        _ = try await transaction.query("SELECT set_config('lock_timeout', $1, true)", ["\(milliseconds)ms"])
        do {
            _ = try await transaction.query("SELECT pg_advisory_xact_lock($1)", [Self.lockKey])
        } catch let error where error.code == .timeout {
            var error = error
            error.message = "another process held the migration lock for longer than \(lockTimeout)"
            throw error
        }
        _ = try await transaction.query("SELECT set_config('lock_timeout', '0', true)")
    }

    private static func verify(_ migration: Migration, against record: AppliedMigration) throws(PostgresError) {
        guard record.checksum == migration.checksum else {
            var error = PostgresError(
                code: .migrationChecksumMismatch,
                message: "applied migration \(migration.version) \"\(record.name)\" was edited (checksum "
                    + "\(record.checksum.prefix(12))… in the database, \(migration.checksum.prefix(12))… now); "
                    + "an applied migration must never change: add a new migration instead"
            )
            error.migrationVersion = migration.version
            throw error
        }
    }

    private static func readApplied(_ database: some PostgresQueryable) async throws(PostgresError) -> [AppliedMigration] {
        let rows = try await database.query("SELECT version, name, checksum, applied_at FROM \(tableName) ORDER BY version")
        var result: [AppliedMigration] = []
        for row in rows { result.append(try record(row)) }
        return result
    }

    private static func record(_ row: PostgresRow) throws(PostgresError) -> AppliedMigration {
        AppliedMigration(
            version: try row.decode(Int.self, column: "version"),
            name: try row.decode(String.self, column: "name"),
            checksum: try row.decode(String.self, column: "checksum"),
            appliedAt: try row.decode(Date.self, column: "applied_at")
        )
    }

    private static func postgresError(_ error: any Error) -> PostgresError {
        if let error = error as? PostgresError { return error }
        if error is CancellationError { return PostgresError(code: .cancelled, message: "migration cancelled") }
        return PostgresError(code: .clientError, message: "migration failed: \(type(of: error))")
    }
}
