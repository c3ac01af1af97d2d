import Foundation

/// What the journal knows of a message it has seen before: when it first came, and the
/// deliveries recorded for it since (each one sent, ended, or retrying).
public struct MessageHistory: Sendable, Hashable {
    /// A delivery of the message as the journal holds it.
    public struct Recorded: Sendable, Hashable {
        public var deviceRef: Int64
        /// The addressed user (`"0"` for a broadcast).
        public var userId: String
        public var position: Int64
        public var state: DeliveryState
        public var attempts: Int
    }

    public var key: MessageKey
    public var id: Int64
    public var receivedAt: Date
    public var deliveries: [Recorded]
}
