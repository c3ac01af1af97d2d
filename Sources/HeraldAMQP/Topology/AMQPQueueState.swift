/// A queue as the broker reported it in `queue.declare-ok`.
public struct AMQPQueueState: Sendable, Hashable {
    /// The queue's name (the generated one when declared with an empty name).
    public var name: String
    /// Messages ready for delivery (not counting unacknowledged ones).
    public var messageCount: UInt32
    /// Consumers currently attached.
    public var consumerCount: UInt32
    /// Set when the queue already existed with other arguments and was used as it is.
    public var warning: AMQPTopologyWarning?
}
