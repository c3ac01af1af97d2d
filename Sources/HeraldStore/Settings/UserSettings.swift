import Foundation

/// A user's notification settings from the app ("Settings > Notifications").
public struct UserSettings: Sendable, Hashable {
    public var userId: String
    /// The app-wide switch: `false` means the user receives nothing.
    public var pushesEnabled: Bool = true
    /// Tags the user does not want, on every device (stored lowercase).
    public var mutedTags: Set<String> = []
    /// When they last changed; `nil` for a user who never changed them (the defaults).
    public var updatedAt: Date?
}
