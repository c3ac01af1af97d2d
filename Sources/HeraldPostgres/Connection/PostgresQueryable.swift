/// Something statements can run on: a ``PostgresClient`` (any pooled connection), a
/// ``PostgresConnection``, or a ``PostgresTransaction``.
///
/// Why: store code written against `some PostgresQueryable` runs unchanged inside or outside
/// a transaction. SQL text is always a constant with `$1, $2, …` placeholders; values go in
/// `parameters`, never into the text.
public protocol PostgresQueryable: Sendable {
    /// Runs one statement and returns its rows.
    /// - Throws: ``PostgresError``.
    func query(_ sql: String, _ parameters: [any PostgresBindable]) async throws(PostgresError) -> PostgresQueryResult

    /// Runs one statement and returns the number of rows it affected.
    /// - Throws: ``PostgresError``.
    func execute(_ sql: String, _ parameters: [any PostgresBindable]) async throws(PostgresError) -> Int
}

extension PostgresQueryable {
    /// Runs a statement without parameters and returns its rows.
    public func query(_ sql: String) async throws(PostgresError) -> PostgresQueryResult {
        try await query(sql, [])
    }

    /// Runs a statement without parameters and returns the number of rows it affected.
    @discardableResult
    public func execute(_ sql: String) async throws(PostgresError) -> Int {
        try await execute(sql, [])
    }
}
