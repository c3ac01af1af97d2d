/// The isolation level of a transaction started by `withTransaction`.
public struct PostgresIsolationLevel: Hashable, Sendable, CustomStringConvertible {
    /// The SQL words after `ISOLATION LEVEL`.
    public let sql: String

    private init(_ sql: String) { self.sql = sql }

    public var description: String { sql }

    public static let readCommitted = PostgresIsolationLevel("READ COMMITTED")
    public static let repeatableRead = PostgresIsolationLevel("REPEATABLE READ")
    /// Transactions may fail with ``PostgresError/Code/serializationFailure``; retry them whole.
    public static let serializable = PostgresIsolationLevel("SERIALIZABLE")
}
