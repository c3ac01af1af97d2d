import Foundation
import HeraldCore

/// A delivery as the journal holds it (for diagnostics and tests; the hot path never reads it).
public struct DeliveryStatus: Sendable, Hashable {
    public var deliveryKey: DeliveryKey
    public var messageKey: String
    public var userId: String
    public var position: Int
    public var state: DeliveryState
    public var attempts: Int
    public var lastError: String?
    public var claimedAt: Date
    public var updatedAt: Date

    public init(
        deliveryKey: DeliveryKey, messageKey: String, userId: String, position: Int, state: DeliveryState, attempts: Int,
        lastError: String?, claimedAt: Date, updatedAt: Date
    ) {
        self.deliveryKey = deliveryKey
        self.messageKey = messageKey
        self.userId = userId
        self.position = position
        self.state = state
        self.attempts = attempts
        self.lastError = lastError
        self.claimedAt = claimedAt
        self.updatedAt = updatedAt
    }
}
