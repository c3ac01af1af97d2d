import Foundation
import HeraldCore

/// A device as stored, with the users subscribed on it.
public struct Device: Sendable, Hashable {
    public var deviceId: String
    /// `nil`: the default app.
    public var app: String?
    public var platform: Platform
    /// `nil`: no token (unsubscribed with `none`, or the token moved to another device).
    public var token: String?
    public var culture: String
    public var tokenState: TokenState
    public var tokenDeadReason: String?
    public var tokenDeadAt: Date?
    public var badge: Int
    /// The position the next notification to this device will take (seed 002).
    public var nextPosition: Int
    public var createdAt: Date
    public var updatedAt: Date
    /// Sorted by user id.
    public var users: [DeviceUser]

    public init(
        deviceId: String, app: String?, platform: Platform, token: String?, culture: String, tokenState: TokenState,
        tokenDeadReason: String?, tokenDeadAt: Date?, badge: Int, nextPosition: Int, createdAt: Date, updatedAt: Date,
        users: [DeviceUser]
    ) {
        self.deviceId = deviceId
        self.app = app
        self.platform = platform
        self.token = token
        self.culture = culture
        self.tokenState = tokenState
        self.tokenDeadReason = tokenDeadReason
        self.tokenDeadAt = tokenDeadAt
        self.badge = badge
        self.nextPosition = nextPosition
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.users = users
    }
}
