/// The `x-queue-type` argument. Extensible (`AMQPQueueType("stream")`).
public struct AMQPQueueType: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The classic queue: one node, fast, optionally lazy.
    public static let classic = AMQPQueueType("classic")
    /// Raft-replicated queue: durable only, survives node loss, supports delivery limits.
    public static let quorum = AMQPQueueType("quorum")
}
