import Foundation

/// A row of `herald_schema_migrations`: a migration a database has applied.
public struct AppliedMigration: Sendable, Hashable {
    public let version: Int
    public let name: String
    public let checksum: String
    public let appliedAt: Date

    public init(version: Int, name: String, checksum: String, appliedAt: Date) {
        self.version = version
        self.name = name
        self.checksum = checksum
        self.appliedAt = appliedAt
    }
}
