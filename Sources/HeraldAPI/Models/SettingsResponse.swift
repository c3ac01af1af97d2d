import Foundation
import HeraldStore
import Hummingbird

/// `GET`/`PUT /v1/me/settings`: the caller's notification settings.
struct SettingsResponse: ResponseEncodable, Sendable {
    var pushesEnabled: Bool
    var mutedTags: [String]
    /// Absent while the user has never changed the defaults.
    var updatedAt: Date?

    init(_ settings: UserSettings) {
        pushesEnabled = settings.pushesEnabled
        mutedTags = settings.mutedTags.sorted()
        updatedAt = settings.updatedAt
    }
}
