/// The one error type HeraldPostgres throws.
///
/// Why a struct with an extensible ``Code``: callers branch on the code (`.connectionLost` →
/// retry later, `.uniqueViolation` → "already exists") while new codes can be added without
/// breaking anyone's `switch`.
///
/// Redaction: ``description`` is safe for user-facing logs. It never contains SQL parameter
/// values, payload text or the server's message (PostgreSQL messages quote offending values,
/// e.g. `invalid input syntax for type integer: "…"`). ``debugDescription`` adds the server's
/// message, detail and hint and the failing SQL text (never the parameters).
public struct PostgresError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, as a value new releases can extend.
    public var code: Code
    /// A short description written by HeraldPostgres or libpq itself (for connection
    /// problems: libpq's own message). Never contains parameter values.
    public var message: String
    /// The libpq entry point that failed, e.g. `PQexecPrepared`, when one did.
    public var call: String?
    /// The five-character SQLSTATE sent by the server, e.g. `23505`.
    public var sqlState: String?
    /// The server's primary message (`PG_DIAG_MESSAGE_PRIMARY`). May quote values: debug only.
    public var serverMessage: String?
    /// The server's detail (`PG_DIAG_MESSAGE_DETAIL`). May quote values: debug only.
    public var serverDetail: String?
    /// The server's hint (`PG_DIAG_MESSAGE_HINT`).
    public var serverHint: String?
    /// Schema, table, column, data type and constraint the server named, when it did.
    public var schemaName: String?
    public var tableName: String?
    public var columnName: String?
    public var constraintName: String?
    /// For decoding errors: the result column that could not be decoded.
    public var column: String?
    /// For migration errors: the migration version concerned.
    public var migrationVersion: Int?
    /// The SQL text that failed (never its parameters). Shown in ``debugDescription`` only.
    public var query: String?
    /// A lower-level error this one wraps (for example, a migration's failing statement).
    public var underlying: (any Error & Sendable)?

    public init(
        code: Code,
        message: String,
        call: String? = nil,
        sqlState: String? = nil,
        query: String? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.call = call
        self.sqlState = sqlState
        self.query = query
        self.underlying = underlying
    }

    /// True for SQLSTATE 23505, whatever ``code`` says.
    public var isUniqueViolation: Bool { sqlState == "23505" }

    public var description: String {
        var parts = ["PostgresError.\(code)"]
        if let sqlState { parts.append("SQLSTATE \(sqlState)") }
        if let call { parts.append("in \(call)") }
        if let column { parts.append("column \"\(column)\"") }
        if let migrationVersion { parts.append("migration \(migrationVersion)") }
        if let tableName { parts.append("table \"\(tableName)\"") }
        if let columnName { parts.append("table column \"\(columnName)\"") }
        if let constraintName { parts.append("constraint \"\(constraintName)\"") }
        var text = parts.joined(separator: " ")
        if !message.isEmpty { text += ": \(message)" }
        if let underlying = underlying as? PostgresError { text += " (caused by \(underlying.description))" }
        return text
    }

    public var debugDescription: String {
        var text = description
        if let serverMessage { text += "\n  server message: \(serverMessage)" }
        if let serverDetail { text += "\n  server detail: \(serverDetail)" }
        if let serverHint { text += "\n  server hint: \(serverHint)" }
        if let schemaName { text += "\n  schema: \(schemaName)" }
        if let query { text += "\n  query: \(query)" }
        if let underlying {
            let inner = (underlying as? PostgresError)?.debugDescription ?? String(describing: underlying)
            text += "\n  underlying: \(inner)"
        }
        return text
    }
}
