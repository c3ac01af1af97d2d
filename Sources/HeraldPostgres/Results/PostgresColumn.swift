/// A result column: its name and PostgreSQL type.
public struct PostgresColumn: Sendable, Hashable {
    public let name: String
    public let dataType: PostgresDataType
}
