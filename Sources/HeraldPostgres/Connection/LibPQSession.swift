internal import CLibPQ
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The sole owner of one `PGconn*`: connects, reconnects with backoff, prepares and caches
/// statements, runs them, and frees the handle exactly once (`PQfinish` in ``disconnect()``,
/// called again by `deinit` only if still open).
///
/// Thread rule: not `Sendable`. It is created, used and destroyed on its
/// ``ConnectionThread``; nothing else ever sees it or its handle.
final class LibPQSession {
    struct StatementKey: Hashable {
        let sql: String
        let types: [UInt32]
    }

    let configuration: PostgresConfiguration
    let logger: Logger
    let label: String
    private let applicationNameSuffix: String?

    private var connection: OpaquePointer?
    private var statements: [StatementKey: String] = [:]
    private var statementOrder: [StatementKey] = []
    private var statementCounter = 0
    /// Result column layouts by statement name, shared by that statement's results.
    private var layouts: [String: PostgresQueryResult.ColumnLayout] = [:]

    private var consecutiveFailures = 0
    private var retryNotBefore: ContinuousClock.Instant?
    private var lastConnectError: PostgresError?

    /// Inside ``PostgresConnection/withTransaction(isolation:readOnly:isolation:_:)``.
    private(set) var inExplicitTransaction = false
    /// The connection broke inside an explicit transaction: statements fail until it ends,
    /// rather than silently running outside any transaction on a new connection.
    private var transactionLost = false

    /// How many connections this session has opened (1 after the first connect).
    private(set) var connectionCount = 0

    /// Set by the notice receiver when the server sends a FATAL message outside any query
    /// (a terminated backend says goodbye this way before closing). Owned by this session,
    /// written only on its thread.
    private let fatalNoticeFlag: UnsafeMutablePointer<Bool> = {
        let flag = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        flag.initialize(to: false)
        return flag
    }()

    init(configuration: PostgresConfiguration, logger: Logger, label: String, applicationNameSuffix: String? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.label = label
        self.applicationNameSuffix = applicationNameSuffix
    }

    deinit {
        disconnect()
        fatalNoticeFlag.deallocate()
    }

    /// Frees the handle (once) and forgets prepared statements, which died with it.
    func disconnect() {
        if let connection {
            PQfinish(connection)
            self.connection = nil
            if inExplicitTransaction { transactionLost = true }
        }
        statements.removeAll()
        statementOrder.removeAll()
        layouts.removeAll()
    }

    // MARK: Connecting

    /// The live connection, opening or replacing it first when needed.
    ///
    /// When idle, a readable socket means the server has sent something unasked for (usually
    /// the FATAL before it closes a terminated backend), so it is read now: a connection found
    /// dead this way is replaced before the statement is ever sent.
    func connected() throws(PostgresError) -> OpaquePointer {
        if let connection {
            if PQstatus(connection) == CONNECTION_OK, inExplicitTransaction || isIdleAndAlive(connection) {
                return connection
            }
            logger.warning("PostgreSQL connection lost", metadata: ["herald.pg.connection": "\(label)"])
            disconnect()
        }
        if transactionLost {
            throw PostgresError(
                code: .connectionLost,
                message: "the connection was lost inside a transaction; the transaction is gone"
            )
        }
        return try connect()
    }

    private func isIdleAndAlive(_ connection: OpaquePointer) -> Bool {
        guard PQtransactionStatus(connection) == PQTRANS_IDLE else { return true }
        // A terminated backend first sends its FATAL message, then closes: libpq passes the
        // message to the notice processor and only notices the close on a later read. Read
        // until the socket is quiet (bounded) so that EOF is seen now.
        for _ in 0..<4 {
            var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0 else { break }
            if PQconsumeInput(connection) == 0 { return false }
            // PQnotifies parses what arrived; an unsolicited FATAL reaches the notice receiver.
            while let notify = PQnotifies(connection) { PQfreemem(notify) }
            if PQstatus(connection) != CONNECTION_OK || fatalNoticeFlag.pointee { return false }
        }
        return PQstatus(connection) == CONNECTION_OK
    }

    private func connect() throws(PostgresError) -> OpaquePointer {
        let now = ContinuousClock.now
        if let retryNotBefore, now < retryNotBefore, var error = lastConnectError {
            error.message = "waiting before reconnecting after: \(error.message)"
            throw error
        }
        fatalNoticeFlag.pointee = false
        let handle = Self.openConnection(
            configuration, applicationNameSuffix: applicationNameSuffix, fatalNoticeFlag: fatalNoticeFlag
        )
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let error = LibPQ.connectionError(handle, call: "PQconnectdbParams", code: .connectionFailed)
            if let handle { PQfinish(handle) }
            consecutiveFailures += 1
            let exponent = min(consecutiveFailures - 1, 16)
            let delay = min(configuration.reconnectInitialDelay * (1 << exponent), configuration.reconnectMaxDelay)
            retryNotBefore = now + delay
            lastConnectError = error
            logger.warning(
                "PostgreSQL connection failed",
                metadata: ["herald.pg.connection": "\(label)", "error": "\(error)", "retry_in": "\(delay)"]
            )
            throw error
        }
        consecutiveFailures = 0
        retryNotBefore = nil
        lastConnectError = nil
        connection = handle
        connectionCount += 1
        if connectionCount > 1 {
            logger.info("PostgreSQL connection re-established", metadata: ["herald.pg.connection": "\(label)"])
        }
        return handle
    }

    /// `PQconnectdbParams` from keyword/value arrays (nothing to escape). Server notices are
    /// not printed (libpq writes them to stderr by default); a FATAL one sets
    /// `fatalNoticeFlag`, which must outlive the connection and belong to its thread.
    static func openConnection(
        _ configuration: PostgresConfiguration, applicationNameSuffix: String?,
        fatalNoticeFlag: UnsafeMutablePointer<Bool>? = nil
    ) -> OpaquePointer? {
        let parameters = configuration.connectionParameters(applicationNameSuffix: applicationNameSuffix)
        let keywords = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keywordArray: [UnsafePointer<CChar>?] = keywords.map { UnsafePointer($0) } + [nil]
        let valueArray: [UnsafePointer<CChar>?] = values.map { UnsafePointer($0) } + [nil]
        let handle = PQconnectdbParams(keywordArray, valueArray, 0)
        if let handle {
            PQsetNoticeReceiver(
                handle,
                { flag, result in
                    guard let flag, let result, let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))) else {
                        return
                    }
                    let text = String(cString: severity)
                    if text == "FATAL" || text == "PANIC" { flag.assumingMemoryBound(to: Bool.self).pointee = true }
                },
                fatalNoticeFlag.map { UnsafeMutableRawPointer($0) }
            )
        }
        return handle
    }

    // MARK: Statements

    /// Runs one parameterized statement through the prepared-statement cache.
    func execute(_ sql: String, _ values: [PostgresValue]) throws(PostgresError) -> PostgresQueryResult {
        let parameters = try ParameterBuffer(values)
        let connection = try connected()
        let key = StatementKey(sql: sql, types: parameters.types)
        let name = try prepared(key, on: connection)
        do {
            return try executePrepared(name, parameters, sql: sql, on: connection)
        } catch let error where Self.isStalePlan(error) && PQtransactionStatus(connection) == PQTRANS_IDLE {
            // The schema changed under a cached statement (e.g. after a migration). Nothing
            // ran, and no transaction was open, so preparing again and retrying is safe.
            forget(key, on: connection)
            let name = try prepared(key, on: connection)
            return try executePrepared(name, parameters, sql: sql, on: connection)
        }
    }

    private static func isStalePlan(_ error: PostgresError) -> Bool {
        error.sqlState == "0A000" && (error.serverMessage?.hasPrefix("cached plan must not change result type") ?? false)
    }

    private func executePrepared(
        _ name: String, _ parameters: ParameterBuffer, sql: String, on connection: OpaquePointer
    ) throws(PostgresError) -> PostgresQueryResult {
        let raw = try parameters.withUnsafeParameters { (values, lengths, formats) throws(PostgresError) in
            PQexecPrepared(connection, name, parameters.count, values, lengths, formats, 0)
        }
        let result = try LibPQ.check(raw, connection: connection, call: "PQexecPrepared", query: sql)
        return consume(result, statement: name)
    }

    /// Copies `result` out (reusing the statement's column layout) and clears it.
    func consume(_ result: OpaquePointer, statement name: String) -> PostgresQueryResult {
        let cached = layouts[name]
        let consumed = LibPQ.consume(result, reusing: cached)
        let layout = consumed.storage.layout
        if layout !== cached, !layout.columns.isEmpty { layouts[name] = layout }
        return consumed
    }

    /// The cached statement name for `key`, preparing it first when needed.
    func prepared(_ key: StatementKey, on connection: OpaquePointer) throws(PostgresError) -> String {
        if let name = statements[key] { return name }
        if statements.count >= configuration.preparedStatementCacheSize, !statementOrder.isEmpty {
            forget(statementOrder[0], on: connection)
        }
        statementCounter += 1
        let name = "herald_\(statementCounter)"
        let raw = key.types.withUnsafeBufferPointer { types in
            PQprepare(connection, name, key.sql, Int32(key.types.count), types.baseAddress)
        }
        PQclear(try LibPQ.check(raw, connection: connection, call: "PQprepare", query: key.sql))
        statements[key] = name
        statementOrder.append(key)
        return name
    }

    private func forget(_ key: StatementKey, on connection: OpaquePointer) {
        guard let name = statements.removeValue(forKey: key) else { return }
        statementOrder.removeAll { $0 == key }
        layouts[name] = nil
        // Our own generated name: nothing to escape. Failure (e.g. inside an aborted
        // transaction) only leaves an unused statement on the server.
        if PQtransactionStatus(connection) != PQTRANS_INERROR {
            PQclear(PQexec(connection, "DEALLOCATE \(name)"))
        }
    }

    /// Runs trusted SQL text with the simple query protocol (several statements allowed,
    /// no parameters). Returns the last statement's result.
    func executeScript(_ sql: String) throws(PostgresError) -> PostgresQueryResult {
        let connection = try connected()
        let result = try LibPQ.check(PQexec(connection, sql), connection: connection, call: "PQexec", query: sql)
        return LibPQ.consume(result)
    }

    // MARK: Transactions

    func beginTransaction(_ sql: String) throws(PostgresError) {
        guard !inExplicitTransaction else {
            throw PostgresError(code: .clientError, message: "a transaction is already open on this connection")
        }
        let connection = try connected()
        PQclear(try LibPQ.check(PQexec(connection, sql), connection: connection, call: "PQexec", query: sql))
        inExplicitTransaction = true
    }

    /// COMMIT. Throws if the server rolled back instead (a statement of the transaction failed
    /// and the caller carried on).
    func commitTransaction() throws(PostgresError) {
        defer { endTransaction() }
        if transactionLost {
            throw PostgresError(code: .connectionLost, message: "the connection was lost inside the transaction; nothing was committed")
        }
        let connection = try connected()
        let result = try LibPQ.check(PQexec(connection, "COMMIT"), connection: connection, call: "PQexec", query: "COMMIT")
        let tag = PQcmdStatus(result).map { String(cString: $0) } ?? ""
        PQclear(result)
        if tag == "ROLLBACK" {
            throw PostgresError(
                code: .serverError, message: "the transaction was rolled back because one of its statements failed",
                call: "PQexec", sqlState: "25P02", query: "COMMIT"
            )
        }
    }

    /// ROLLBACK, if the connection is still there (a lost connection rolled back already).
    func rollbackTransaction() {
        defer { endTransaction() }
        guard !transactionLost, let connection, PQstatus(connection) == CONNECTION_OK else { return }
        PQclear(PQexec(connection, "ROLLBACK"))
    }

    private func endTransaction() {
        inExplicitTransaction = false
        transactionLost = false
    }

    /// Called when a pooled connection is handed back: a transaction the caller opened by hand
    /// and left open is rolled back so that the next user starts clean.
    func resetAfterUse() {
        guard !inExplicitTransaction, let connection, PQstatus(connection) == CONNECTION_OK else { return }
        if PQtransactionStatus(connection) != PQTRANS_IDLE {
            logger.warning(
                "A pooled PostgreSQL connection was returned inside a transaction; rolling it back",
                metadata: ["herald.pg.connection": "\(label)"]
            )
            PQclear(PQexec(connection, "ROLLBACK"))
        }
    }

    /// The server process id of the current connection (connecting first if needed).
    func backendPID() throws(PostgresError) -> Int32 {
        PQbackendPID(try connected())
    }

    /// Opens the connection now rather than on first use; throws its error.
    func connectNow() throws(PostgresError) {
        _ = try connected()
    }
}
