import HeraldCore

/// FCM's checks of `message.android` (`AndroidConfig`) and `message.android.notification`
/// (`AndroidNotification`): the field names the protobuf knows (snake_case or lowerCamelCase, as
/// protobuf's JSON mapping accepts both), a valid `priority` and `ttl`, and string fields that
/// are strings. What Google answers to a misspelt field (`channelID`, `chanel_id`) is a 400, so
/// the sandbox answers the same: a payload the sandbox takes has no field FCM would refuse.
enum FCMAndroidConfig {
    /// `AndroidConfig`'s fields (FCM HTTP v1 reference).
    static let fields: Set<String> = [
        "collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification", "fcm_options", "direct_boot_ok",
        "bandwidth_constrained_ok", "restricted_satellite_ok",
    ]

    /// `AndroidNotification`'s fields (FCM HTTP v1 reference).
    static let notificationFields: Set<String> = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "body_loc_args", "title_loc_key", "title_loc_args",
        "channel_id", "ticker", "sticky", "event_time", "local_only", "notification_priority", "default_sound", "default_vibrate_timings",
        "default_light_settings", "vibrate_timings", "visibility", "notification_count", "light_settings", "image", "bypass_proxy_notification",
        "proxy",
    ]

    /// `AndroidNotification`'s fields of type string.
    static let notificationStringFields: Set<String> = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "title_loc_key", "channel_id", "ticker", "image",
    ]

    /// The first thing FCM would refuse in `android`, or `nil`.
    static func rejection(of android: JSONValue) -> FCMRejection? {
        guard case .object(let android) = android else { return .invalid("Invalid value at 'message.android'", field: "message.android") }
        for key in android.keys.sorted() where !fields.contains(snakeCase(key)) {
            return .invalid("Invalid JSON payload received. Unknown name \"\(key.prefix(64))\" at 'message.android': Cannot find field.")
        }
        if let priority = android["priority"] {
            guard let priority = priority.stringValue, ["NORMAL", "HIGH", "normal", "high"].contains(priority) else {
                return .invalid(
                    "Invalid value at 'message.android.priority' (type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority)",
                    field: "message.android.priority")
            }
        }
        if let ttl = android["ttl"] {
            guard let ttl = ttl.stringValue, isDuration(ttl) else {
                return .invalid("Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration)", field: "message.android.ttl")
            }
        }
        if let notification = android["notification"] { return rejection(ofNotification: notification) }
        return nil
    }

    private static func rejection(ofNotification notification: JSONValue) -> FCMRejection? {
        guard case .object(let notification) = notification else {
            return .invalid("Invalid value at 'message.android.notification'", field: "message.android.notification")
        }
        for key in notification.keys.sorted() {
            let name = snakeCase(key)
            guard notificationFields.contains(name) else {
                return .invalid("Invalid JSON payload received. Unknown name \"\(key.prefix(64))\" at 'message.android.notification': Cannot find field.")
            }
            if notificationStringFields.contains(name), notification[key]?.stringValue == nil {
                return .invalid(
                    "Invalid value at 'message.android.notification.\(name)' (TYPE_STRING)", field: "message.android.notification.\(name)")
            }
        }
        return nil
    }

    /// `channelId` → `channel_id`; snake_case names stay as they are.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isUppercase {
                out += "_" + character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// A protobuf `Duration` in JSON: seconds with up to nine fractional digits, then `s`.
    static func isDuration(_ text: String) -> Bool {
        guard text.hasSuffix("s") else { return false }
        let number = text.dropLast()
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber) else { return false }
        if parts.count == 2 { return (1...9).contains(parts[1].count) && parts[1].allSatisfy { $0.isASCII && $0.isNumber } }
        return true
    }
}
