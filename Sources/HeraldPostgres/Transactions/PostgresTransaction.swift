/// The statements of one open transaction, all on the same connection.
///
/// Handed to the body of `withTransaction`; valid only until that body returns. Statements
/// run in order on the connection's thread. If the connection is lost mid-transaction, this
/// and every later statement of the transaction fail with
/// ``PostgresError/Code/connectionLost``: they are never silently run on a new connection
/// outside the transaction.
public struct PostgresTransaction: PostgresQueryable {
    /// The connection the transaction runs on.
    public let connection: PostgresConnection

    init(connection: PostgresConnection) { self.connection = connection }

    public func query(_ sql: String, _ parameters: [any PostgresBindable]) async throws(PostgresError) -> PostgresQueryResult {
        try await connection.query(sql, parameters)
    }

    @discardableResult
    public func execute(_ sql: String, _ parameters: [any PostgresBindable]) async throws(PostgresError) -> Int {
        try await connection.execute(sql, parameters)
    }

    /// See ``PostgresConnection/executeBatch(_:_:)``.
    @discardableResult
    public func executeBatch(_ sql: String, _ parameterSets: [[any PostgresBindable]]) async throws(PostgresError) -> [Int] {
        try await connection.executeBatch(sql, parameterSets)
    }

    /// See ``PostgresConnection/executeScript(_:)``.
    public func executeScript(_ sql: String) async throws(PostgresError) {
        try await connection.executeScript(sql)
    }
}
