import HeraldPostgres

/// The one error type HeraldStore throws.
///
/// Why a struct with an extensible ``Code``: callers branch on the code, or just on
/// ``isTransient`` (the worker retries a transient failure later and never parses messages),
/// and new codes break nobody's `switch`.
///
/// Redaction: ``description`` is safe for logs: it never contains tokens, payloads, SQL
/// parameters or the server's message (which may quote values). ``debugDescription`` adds the
/// underlying ``PostgresError``'s debug description (server message and SQL text, never the
/// parameters).
public struct StoreError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public var code: Code
    /// What went wrong, written by HeraldStore; never contains values from the data.
    public var message: String
    /// The store operation that failed, e.g. `DeliveryJournal.claim`.
    public var operation: String?
    /// The database error behind this one, if any.
    public var underlying: PostgresError?

    /// Whether the same call may succeed later (database unreachable or restarting, a
    /// timeout, a deadlock or serialization failure): retry with backoff. Everything else
    /// fails the same way again.
    public var isTransient: Bool {
        code == .unavailable || code == .timeout || code == .contention
    }

    public var description: String { text(underlying.map { " (\($0.description))" }) }

    public var debugDescription: String { text(underlying.map { "\n  underlying: \($0.debugDescription)" }) }

    private func text(_ underlying: String?) -> String {
        var text = "StoreError.\(code)"
        if let operation { text += " in \(operation)" }
        if !message.isEmpty { text += ": \(message)" }
        return text + (underlying ?? "")
    }
}

extension StoreError {
    /// Classifies a database error once, so that callers never look at SQLSTATEs.
    init(_ error: PostgresError, operation: String) {
        let code: Code
        switch error.code {
        case .connectionFailed, .connectionLost: code = .unavailable
        case .timeout: code = .timeout
        case .serializationFailure: code = .contention
        case .uniqueViolation: code = .conflict
        case .closed: code = .closed
        case .cancelled: code = .cancelled
        case .invalidConfiguration: code = .invalidConfiguration
        case .invalidParameter: code = .invalidData
        case .decodingFailed, .migrationChecksumMismatch, .migrationFailed, .invalidMigration: code = .schemaMismatch
        default: code = Self.classify(sqlState: error.sqlState)
        }
        self.init(code: code, message: Self.message(for: code), operation: operation, underlying: error)
    }

    private static func classify(sqlState: String?) -> Code {
        guard let state = sqlState else { return .database }
        switch state {
        case "57P01", "57P02", "57P03", "25006": return .unavailable  // shutdown, crash, starting, read-only (failover)
        case "55P03": return .timeout
        default: break
        }
        switch state.prefix(2) {
        case "08", "53": return .unavailable  // connection exception, insufficient resources
        case "40": return .contention
        case "22", "23": return .invalidData  // data exception, integrity constraint
        case "42", "3F": return .schemaMismatch  // undefined table/function, bad schema
        default: return .database
        }
    }

    private static func message(for code: Code) -> String {
        switch code {
        case .unavailable: "the database is unavailable"
        case .timeout: "the database did not answer in time"
        case .contention: "a concurrent transaction interfered; retry"
        case .conflict: "the row already exists"
        case .closed: "the store is closed"
        case .cancelled: "cancelled"
        case .invalidData: "the database refused the data"
        case .schemaMismatch: "the database schema is not what this release expects (run `herald migrate`)"
        case .invalidConfiguration: "invalid database configuration"
        default: "database error"
        }
    }

    /// Runs `body`, turning whatever it throws into a ``StoreError`` for `operation`.
    @discardableResult
    static func wrap<T>(_ operation: String, _ body: () async throws -> T) async throws(StoreError) -> T {
        do {
            return try await body()
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresError {
            throw StoreError(error, operation: operation)
        } catch is CancellationError {
            throw StoreError(code: .cancelled, message: "cancelled", operation: operation)
        } catch {
            throw StoreError(code: .database, message: "unexpected \(type(of: error))", operation: operation)
        }
    }
}
