import HeraldSupport

/// What HeraldWorker throws: configuration refused before the worker starts, and the dead-letter
/// tools' failures (broker or store errors).
///
/// `description` is safe for logs (it never contains message bodies, tokens or secrets);
/// `debugDescription` adds the underlying error's debug text.
public struct WorkerError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<WorkerError>

    public var code: Code
    public var message: String
    /// The error behind this one (an `AMQPError` or a `StoreError`), if any.
    public var underlying: (any Error & Sendable)?

    public var description: String {
        var text = "WorkerError.\(code): \(message)"
        if let underlying { text += " (\(underlying))" }
        return text
    }

    public var debugDescription: String {
        var text = "WorkerError.\(code): \(message)"
        if let underlying { text += "\n  underlying: \(String(reflecting: underlying))" }
        return text
    }
}

extension ErrorCode where Domain == WorkerError {
    /// A ``WorkerConfiguration`` value is out of range.
    public static let invalidConfiguration = Self("invalidConfiguration")
    /// The broker refused or lost a call of a tool (`herald dlq`, `herald drain`).
    public static let broker = Self("broker")
    /// The store refused or lost a call of a tool.
    public static let store = Self("store")
}
