internal import Crypto

/// One numbered schema change.
///
/// Why numbered and checksummed: a database records which versions it has applied and the
/// SHA-256 of their SQL; editing an applied migration would leave databases that ran the old
/// text different from new ones, so ``MigrationRunner`` refuses to run when a checksum
/// changed. Change the schema with a new migration instead.
public struct Migration: Sendable, Hashable {
    /// Positive and unique; migrations apply in ascending order.
    public let version: Int
    public let name: String
    /// One or more statements, run with the simple query protocol inside one transaction
    /// (so no `CREATE INDEX CONCURRENTLY` and similar).
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Lower-case hex SHA-256 of ``sql``'s UTF-8 bytes.
    public var checksum: String {
        SHA256.hash(data: Array(sql.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
