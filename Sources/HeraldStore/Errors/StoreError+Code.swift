import HeraldSupport

extension StoreError {
    public typealias Code = ErrorCode<StoreError>
}

extension ErrorCode where Domain == StoreError {
    /// Transient: the database cannot be reached, the connection broke mid-statement (the
    /// statement may or may not have run), or the server is restarting or read-only.
    public static let unavailable = Self("unavailable")
    /// Transient: a statement or lock wait exceeded its time limit.
    public static let timeout = Self("timeout")
    /// Transient: a deadlock or serialization failure; the whole call can be retried.
    public static let contention = Self("contention")
    /// A unique key already exists.
    public static let conflict = Self("conflict")
    /// The thing addressed does not exist.
    public static let notFound = Self("notFound")
    /// The caller's data cannot be stored (invalid value, a NUL character, a catalog with
    /// problems, a constraint violation).
    public static let invalidData = Self("invalidData")
    /// The database does not match this release: missing or edited migrations, or a
    /// column that does not decode.
    public static let schemaMismatch = Self("schemaMismatch")
    /// The store's configuration is invalid.
    public static let invalidConfiguration = Self("invalidConfiguration")
    /// A caller broke a call's contract (a bug, not a database state): not transient.
    public static let misuse = Self("misuse")
    /// The store (its database client) was closed.
    public static let closed = Self("closed")
    /// The calling task was cancelled.
    public static let cancelled = Self("cancelled")
    /// Any other database error.
    public static let database = Self("database")
}
