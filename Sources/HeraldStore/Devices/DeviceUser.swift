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

    public init(
        userId: String, tags: Set<String>?, excludedTags: Set<String> = [], zoneId: String? = nil, branchId: String? = nil,
        subscribedAt: Date
    ) {
        self.userId = userId
        self.tags = tags
        self.excludedTags = excludedTags
        self.zoneId = zoneId
        self.branchId = branchId
        self.subscribedAt = subscribedAt
    }
}
