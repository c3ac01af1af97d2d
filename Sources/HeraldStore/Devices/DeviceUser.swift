import Foundation

/// One user's subscription on a device.
public struct DeviceUser: Sendable, Hashable {
    public var userId: String
    /// `nil`: every tag.
    public var tags: Set<String>?
    /// Tags unsubscribed from while subscribed to every tag.
    public var excludedTags: Set<String>
    public var zoneId: String?
    public var branchId: String?
    public var subscribedAt: Date
}
