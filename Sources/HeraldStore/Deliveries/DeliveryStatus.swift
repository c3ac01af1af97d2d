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
}
