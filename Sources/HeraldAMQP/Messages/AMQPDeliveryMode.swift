/// Whether the broker writes a message to disk (AMQP `delivery-mode`).
public enum AMQPDeliveryMode: UInt8, Sendable, Hashable {
    /// Kept in memory only; lost when the broker restarts. Mode 1.
    case transient = 1
    /// Written to disk on durable queues (quorum queues always persist). Mode 2, Herald's default.
    case persistent = 2
}
