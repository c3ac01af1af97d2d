import Foundation
import HeraldCore

/// A delivery as the journal holds it: what support tools and tests read (the hot path never
/// does).
public struct DeliveryStatus: Sendable, Hashable {
    /// The collapse id the delivery was sent with; `nil` when its device no longer exists.
    public var deliveryKey: DeliveryKey?
    public var messageKey: String
    /// The device (hardware id, app, platform) while it exists.
    public var deviceId: String?
    public var app: String?
    public var platform: Platform?
    /// The addressed user (`"0"` for a broadcast).
    public var userId: String
    public var eventId: String?
    public var position: Int
    public var state: DeliveryState
    public var attempts: Int
    /// The provider's id for the notification (`apns-id`, FCM message name), if known.
    public var providerId: String?
    public var lastError: String?
    /// When the message arrived; when this row was last written.
    public var receivedAt: Date
    public var recordedAt: Date

    public init(
        deliveryKey: DeliveryKey?, messageKey: String, deviceId: String?, app: String?, platform: Platform?, userId: String, eventId: String?,
        position: Int, state: DeliveryState, attempts: Int, providerId: String?, lastError: String?, receivedAt: Date, recordedAt: Date
    ) {
        self.deliveryKey = deliveryKey
        self.messageKey = messageKey
        self.deviceId = deviceId
        self.app = app
        self.platform = platform
        self.userId = userId
        self.eventId = eventId
        self.position = position
        self.state = state
        self.attempts = attempts
        self.providerId = providerId
        self.lastError = lastError
        self.receivedAt = receivedAt
        self.recordedAt = recordedAt
    }
}
