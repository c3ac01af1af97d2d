import Logging
import Synchronization

/// Herald's entry point to PostgreSQL: a small pool of connections, each with its own thread.
///
/// Thread rules of HeraldPostgres: every libpq call runs on a dedicated OS thread owned by
/// one connection (`herald-pg-…`), never on Swift's cooperative pool; async callers suspend
/// on continuations. A `PGconn*` is confined to its thread and freed once. Listeners
/// (``listen(channel:)``) have their own connection and thread too. Every type here is
/// `Sendable`; share one client per process.
///
/// Pooling: at most ``PostgresConfiguration/poolSize`` connections, opened lazily; waiting
/// callers are served in arrival order. Statements are always prepared (cached per
/// connection and SQL text) and take parameters separately. A broken connection (server
/// restart, `pg_terminate_backend`) fails the statement that was in flight with
/// ``PostgresError/Code/connectionLost`` and is replaced on its next use, so after the server
/// comes back new queries succeed. Statements are never retried automatically.
///
/// Cancellation: cancelling a task stops its wait for a pooled connection
/// (``PostgresError/Code/cancelled``) but does not interrupt a statement already sent; bound
/// those with ``PostgresConfiguration/statementTimeout``.
///
/// Everything throws ``PostgresError`` (closure-taking methods also rethrow the closure's
/// errors).
public final class PostgresClient: PostgresQueryable, Sendable {
    public let configuration: PostgresConfiguration
    let pool: ConnectionPool
    private let logger: Logger

    private static let counter = Mutex(0)

    /// Creates the client; no connection is opened until first use.
    /// - Throws: ``PostgresError/Code/invalidConfiguration``.
    public init(configuration: PostgresConfiguration, logger: Logger = Logger(label: "herald.postgres")) throws(PostgresError) {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        let number = Self.counter.withLock { counter in
            counter += 1
            return counter
        }
        self.pool = ConnectionPool(configuration: configuration, logger: logger, label: "pool\(number)")
    }

    /// Lends one connection to `body` for its exclusive use (several statements in a row on
    /// the same session, session-level settings or advisory locks). Do not keep it after
    /// `body` returns. A transaction left open by hand is rolled back when it comes back.
    /// - Throws: ``PostgresError`` (`closed`, `cancelled`) or whatever `body` throws.
    public func withConnection<T>(
        isolation actor: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        let connection = try await pool.acquire()
        defer {
            connection.enqueue { session in session.resetAfterUse() }
            pool.release(connection)
        }
        return try await body(connection)
    }

    /// A connection of its own with this client's settings, outside the pool: for a caller that
    /// keeps its statements in order on one session (``PostgresConnection/submit(_:_:proceed:completion:)``).
    /// It connects on first use; the caller closes it. `deadPeer`: see
    /// ``PostgresConfiguration/detectingDeadPeer(within:)``.
    public func makeDedicatedConnection(label: String, deadPeer: Duration? = nil) -> PostgresConnection {
        PostgresConnection(
            configuration: deadPeer.map { configuration.detectingDeadPeer(within: $0) } ?? configuration, logger: logger,
            label: "\(pool.poolLabel)-\(label)")
    }

    /// Runs `body` in a transaction on one pooled connection; see
    /// ``PostgresConnection/withTransaction(isolation:readOnly:isolation:_:)``.
    public func withTransaction<T>(
        isolation level: PostgresIsolationLevel = .readCommitted,
        readOnly: Bool = false,
        isolation actor: isolated (any Actor)? = #isolation,
        _ body: (PostgresTransaction) async throws -> sending T
    ) async throws -> sending T {
        try await withConnection { connection in
            try await connection.withTransaction(isolation: level, readOnly: readOnly, body)
        }
    }

    public func query(_ sql: String, _ parameters: [any PostgresBindable]) async throws(PostgresError) -> PostgresQueryResult {
        let values = parameters.map(\.postgresValue)
        let connection = try await pool.acquire()
        defer { pool.release(connection) }
        return try await connection.run { (session) throws(PostgresError) in
            defer { session.resetAfterUse() }
            return try session.execute(sql, values)
        }
    }

    @discardableResult
    public func execute(_ sql: String, _ parameters: [any PostgresBindable]) async throws(PostgresError) -> Int {
        try await query(sql, parameters).affectedRows
    }

    /// See ``PostgresConnection/executeBatch(_:_:)``; runs on one pooled connection.
    @discardableResult
    public func executeBatch(_ sql: String, _ parameterSets: [[any PostgresBindable]]) async throws(PostgresError) -> [Int] {
        try await queryBatch(sql, parameterSets).map(\.affectedRows)
    }

    /// See ``PostgresConnection/queryBatch(_:_:)``; runs on one pooled connection.
    public func queryBatch(_ sql: String, _ parameterSets: [[any PostgresBindable]]) async throws(PostgresError) -> [PostgresQueryResult] {
        let values = parameterSets.map { $0.map(\.postgresValue) }
        let connection = try await pool.acquire()
        defer { pool.release(connection) }
        return try await connection.run { (session) throws(PostgresError) in
            defer { session.resetAfterUse() }
            return try session.executeBatch(sql, values)
        }
    }

    /// Sends a notification (`SELECT pg_notify($1, $2)`); delivered when the sender's
    /// transaction commits (immediately here).
    /// - Throws: ``PostgresError``.
    public func notify(channel: String, payload: String = "") async throws(PostgresError) {
        _ = try await query("SELECT pg_notify($1, $2)", [channel, payload])
    }

    /// Listens on `channel` on a dedicated connection and thread; see ``PostgresNotifications``.
    /// The listener stops when the consumer stops iterating (task cancelled or sequence
    /// dropped).
    public func listen(channel: String) -> PostgresNotifications {
        PostgresNotifications(configuration: configuration, channel: channel, logger: logger)
    }

    /// Stops taking work, waits for lent connections to come back, and closes every
    /// connection (queued statements finish first). Later calls throw
    /// ``PostgresError/Code/closed``. Listeners are independent: stop them by ending iteration.
    public func close() async {
        await pool.close()
    }
}
