import Logging
import Synchronization

/// One PostgreSQL connection with its own thread.
///
/// Why: libpq blocks, so each connection owns a dedicated OS thread (named
/// `herald-pg-<n>`) that makes every libpq call for it, one job at a time; async callers
/// wait on a continuation and Swift's cooperative pool is never blocked. The `PGconn*` lives
/// on that thread only and is freed once, when the connection is closed or deallocated.
///
/// Connecting is lazy (or eager with ``connect(configuration:logger:)``). A connection that
/// breaks is replaced on its next use: the statement in flight when it broke fails with
/// ``PostgresError/Code/connectionLost`` (it is not retried: it may have run), while a break
/// noticed before sending (an idle connection whose backend was terminated) is repaired
/// before the statement is sent. After a failed connection attempt, uses fail fast with
/// ``PostgresError/Code/connectionFailed`` until the backoff delay has passed.
///
/// Calls are serialized in arrival order; concurrent callers are safe but queue behind each
/// other. Most code uses ``PostgresClient``, which pools these.
public final class PostgresConnection: PostgresQueryable, Sendable {
    /// A label for logs (`pool1-3`, `conn-2`). The thread is named `herald-pg-<n>`.
    public let label: String
    let thread: ConnectionThread

    init(configuration: PostgresConfiguration, logger: Logger, label: String, applicationNameSuffix: String? = nil) {
        self.label = label
        self.thread = ConnectionThread(
            configuration: configuration, logger: logger, label: label,
            applicationNameSuffix: applicationNameSuffix
        )
    }

    deinit { thread.requestStop() }

    /// Opens a standalone connection (not pooled) and connects before returning.
    /// - Throws: ``PostgresError`` (`invalidConfiguration`, `connectionFailed`).
    public static func connect(
        configuration: PostgresConfiguration, logger: Logger = Logger(label: "herald.postgres")
    ) async throws(PostgresError) -> PostgresConnection {
        try configuration.validate()
        let connection = PostgresConnection(configuration: configuration, logger: logger, label: nextStandaloneLabel())
        do {
            try await connection.run { (session) throws(PostgresError) in try session.connectNow() }
        } catch {
            await connection.close()
            throw error
        }
        return connection
    }

    private static let standaloneCounter = Mutex(0)
    private static func nextStandaloneLabel() -> String {
        "conn-\(standaloneCounter.withLock { counter in counter += 1; return counter })"
    }

    /// Runs `body` on this connection's thread and returns its result to the caller.
    func run<T: Sendable>(_ body: @escaping @Sendable (LibPQSession) throws(PostgresError) -> T) async throws(PostgresError) -> T {
        let result: Result<T, PostgresError> = await withCheckedContinuation { continuation in
            let accepted = thread.submit { session in
                continuation.resume(returning: Result { () throws(PostgresError) -> T in try body(session) })
            }
            if !accepted {
                continuation.resume(returning: .failure(PostgresError(code: .closed, message: "the connection is closed")))
            }
        }
        return try result.get()
    }

    /// Queues `body` without waiting for it (used for housekeeping that must precede the next
    /// user's statements, which it does because jobs run in order).
    func enqueue(_ body: @escaping @Sendable (LibPQSession) -> Void) {
        thread.submit(body)
    }

    /// Queues a statement behind every call queued before it and returns at once: statements
    /// submitted one after another run back to back on the server, with no trip back to the
    /// caller in between. `proceed` is asked on the connection's thread just before the
    /// statement would be sent; when it answers false the statement is skipped and `completion`
    /// gets `nil`. `completion` runs on the connection's thread, before the next queued call:
    /// keep it short.
    public func submit(
        _ sql: String, _ parameters: [any PostgresBindable], proceed: @escaping @Sendable () -> Bool,
        completion: @escaping @Sendable (Result<PostgresQueryResult?, PostgresError>) -> Void
    ) {
        let values = parameters.map(\.postgresValue)
        let accepted = thread.submit { session in
            guard proceed() else { return completion(.success(nil)) }
            completion(Result { () throws(PostgresError) -> PostgresQueryResult? in try session.execute(sql, values) })
        }
        if !accepted { completion(.failure(PostgresError(code: .closed, message: "the connection is closed"))) }
    }

    public func query(_ sql: String, _ parameters: [any PostgresBindable]) async throws(PostgresError) -> PostgresQueryResult {
        let values = parameters.map(\.postgresValue)
        return try await run { (session) throws(PostgresError) in try session.execute(sql, values) }
    }

    @discardableResult
    public func execute(_ sql: String, _ parameters: [any PostgresBindable]) async throws(PostgresError) -> Int {
        let values = parameters.map(\.postgresValue)
        return try await run { (session) throws(PostgresError) in try session.execute(sql, values).affectedRows }
    }

    /// Runs one statement once per parameter set in libpq pipeline mode (no round trip per
    /// execution) and returns each execution's affected-row count. Outside a transaction the
    /// batch is atomic: if any execution fails, none takes effect and the first error is
    /// thrown. Meant for many small statements (inserts, updates, deletes).
    /// - Throws: ``PostgresError``.
    @discardableResult
    public func executeBatch(_ sql: String, _ parameterSets: [[any PostgresBindable]]) async throws(PostgresError) -> [Int] {
        try await queryBatch(sql, parameterSets).map(\.affectedRows)
    }

    /// Like ``executeBatch(_:_:)`` but returns each execution's rows.
    /// - Throws: ``PostgresError``.
    public func queryBatch(_ sql: String, _ parameterSets: [[any PostgresBindable]]) async throws(PostgresError) -> [PostgresQueryResult] {
        let values = parameterSets.map { $0.map(\.postgresValue) }
        return try await run { (session) throws(PostgresError) in try session.executeBatch(sql, values) }
    }

    /// Runs trusted, constant SQL text with the simple query protocol: several statements
    /// separated by `;`, no parameters. For migrations and DDL only; never build the text
    /// from input.
    /// - Throws: ``PostgresError``.
    public func executeScript(_ sql: String) async throws(PostgresError) {
        _ = try await run { (session) throws(PostgresError) in try session.executeScript(sql) }
    }

    /// The server process id serving this connection (`pg_backend_pid()`), connecting first
    /// if needed.
    public func backendPID() async throws(PostgresError) -> Int32 {
        try await run { (session) throws(PostgresError) in try session.backendPID() }
    }

    /// Runs `body` inside `BEGIN … COMMIT` on this connection. If `body` throws, the
    /// transaction is rolled back and the error rethrown. If COMMIT fails, or the server rolled
    /// back because a statement failed and `body` carried on, this throws.
    ///
    /// Do not use the connection for anything else while the body runs.
    /// - Throws: whatever `body` throws, or ``PostgresError``.
    public func withTransaction<T>(
        isolation level: PostgresIsolationLevel = .readCommitted,
        readOnly: Bool = false,
        isolation actor: isolated (any Actor)? = #isolation,
        _ body: (PostgresTransaction) async throws -> sending T
    ) async throws -> sending T {
        let begin = "BEGIN ISOLATION LEVEL \(level.sql)\(readOnly ? " READ ONLY" : "")"
        try await run { (session) throws(PostgresError) in try session.beginTransaction(begin) }
        let value: T
        do {
            value = try await body(PostgresTransaction(connection: self))
        } catch {
            _ = try? await run { session in session.rollbackTransaction() }
            throw error
        }
        try await run { (session) throws(PostgresError) in try session.commitTransaction() }
        return value
    }

    /// Closes the connection: queued statements still run, then the handle is freed and the
    /// thread exits. Later calls fail with ``PostgresError/Code/closed``.
    public func close() async {
        await thread.stop()
    }
}
