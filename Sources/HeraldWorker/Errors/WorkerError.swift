/// What HeraldWorker throws: configuration refused before the worker starts, and the dead-letter
/// tools' failures (broker or store errors).
///
/// `description` is safe for logs (it never contains message bodies, tokens or secrets);
/// `debugDescription` adds the underlying error's debug text.
public struct WorkerError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// An extensible code: new codes break nobody's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A ``WorkerConfiguration`` value is out of range.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// The broker refused or lost a call of a tool (`herald dlq`, `herald drain`).
        public static let broker = Code("broker")
        /// The store refused or lost a call of a tool.
        public static let store = Code("store")
    }

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
