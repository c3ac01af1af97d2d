import Foundation

/// A row of `herald_schema_migrations`: a migration a database has applied.
public struct AppliedMigration: Sendable, Hashable {
    public let version: Int
    public let name: String
    public let checksum: String
    public let appliedAt: Date
}
