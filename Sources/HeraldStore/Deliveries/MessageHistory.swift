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

        public init(deviceRef: Int64, userId: String, position: Int64, state: DeliveryState, attempts: Int) {
            self.deviceRef = deviceRef
            self.userId = userId
            self.position = position
            self.state = state
            self.attempts = attempts
        }
    }

    public var key: MessageKey
    public var id: Int64
    public var receivedAt: Date
    public var deliveries: [Recorded]

    public init(key: MessageKey, id: Int64, receivedAt: Date, deliveries: [Recorded]) {
        self.key = key
        self.id = id
        self.receivedAt = receivedAt
        self.deliveries = deliveries
    }
}
