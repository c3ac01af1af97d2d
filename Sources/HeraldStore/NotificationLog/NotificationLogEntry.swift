import Foundation
import HeraldCore

/// One notification sent to a device, at its position (seed 002): what an app that missed
/// pushes fetches again.
public struct NotificationLogEntry: Sendable, Hashable {
    public var position: Int
    public var deliveryKey: DeliveryKey
    /// The addressed user (`"0"` for a broadcast).
    public var userId: String
    public var eventId: String?
    /// The exact payload sent to the provider.
    public var payload: String
    public var createdAt: Date
}
