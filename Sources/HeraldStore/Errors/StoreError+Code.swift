extension StoreError {
    /// An extensible error code: a struct with static members, so adding one breaks nobody.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(_ rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        /// Transient: the database cannot be reached, the connection broke mid-statement (the
        /// statement may or may not have run), or the server is restarting or read-only.
        public static let unavailable = Code("unavailable")
        /// Transient: a statement or lock wait exceeded its time limit.
        public static let timeout = Code("timeout")
        /// Transient: a deadlock or serialization failure; the whole call can be retried.
        public static let contention = Code("contention")
        /// A unique key already exists.
        public static let conflict = Code("conflict")
        /// The thing addressed does not exist.
        public static let notFound = Code("notFound")
        /// The caller's data cannot be stored (invalid value, a NUL character, a catalog with
        /// problems, a constraint violation).
        public static let invalidData = Code("invalidData")
        /// The database does not match this release: missing or edited migrations, or a
        /// column that does not decode.
        public static let schemaMismatch = Code("schemaMismatch")
        /// The store's configuration is invalid.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A caller broke a call's contract (a bug, not a database state): not transient.
        public static let misuse = Code("misuse")
        /// The store (its database client) was closed.
        public static let closed = Code("closed")
        /// The calling task was cancelled.
        public static let cancelled = Code("cancelled")
        /// Any other database error.
        public static let database = Code("database")
    }
}
