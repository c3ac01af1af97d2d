import HeraldSupport

extension PostgresError {
    public typealias Code = ErrorCode<PostgresError>
}

extension ErrorCode where Domain == PostgresError {
    /// The configuration (URL, pool size, …) is invalid. Thrown before any I/O.
    public static let invalidConfiguration = Self("invalidConfiguration")
    /// A connection could not be opened (server down, auth failure, or waiting out the
    /// reconnect backoff after such a failure).
    public static let connectionFailed = Self("connectionFailed")
    /// The connection broke while this statement was in flight (server restart,
    /// `pg_terminate_backend`, network). The statement may or may not have run. The
    /// connection is replaced on its next use.
    public static let connectionLost = Self("connectionLost")
    /// The client or connection was closed before or while the operation was queued.
    public static let closed = Self("closed")
    /// The server rejected the statement; see ``PostgresError/sqlState``.
    public static let serverError = Self("serverError")
    /// SQLSTATE 23505. ``PostgresError/constraintName`` names the constraint.
    public static let uniqueViolation = Self("uniqueViolation")
    /// SQLSTATE 40001 or 40P01: the transaction should be retried as a whole.
    public static let serializationFailure = Self("serializationFailure")
    /// A statement or lock wait exceeded its time limit (SQLSTATE 57014, 55P03), or a
    /// client-side wait did.
    public static let timeout = Self("timeout")
    /// A parameter could not be sent (e.g. a string containing a NUL character).
    public static let invalidParameter = Self("invalidParameter")
    /// A result column could not be decoded as the requested Swift type (wrong type,
    /// unexpected NULL, malformed text, unknown column).
    public static let decodingFailed = Self("decodingFailed")
    /// libpq reported a protocol- or client-side problem that is none of the above.
    public static let clientError = Self("clientError")
    /// The task waiting for a connection was cancelled.
    public static let cancelled = Self("cancelled")
    /// The migration list itself is invalid (duplicate or non-positive versions).
    public static let invalidMigration = Self("invalidMigration")
    /// An applied migration's SQL changed; applied migrations must never be edited.
    public static let migrationChecksumMismatch = Self("migrationChecksumMismatch")
    /// A migration's SQL failed; its transaction was rolled back.
    public static let migrationFailed = Self("migrationFailed")
}
