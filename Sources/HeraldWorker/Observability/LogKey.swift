/// The metadata keys of HeraldWorker's log lines, defined once so that every line about the same
/// thing uses the same name (and a log search for `herald.user_id=…` finds them all).
public enum LogKey {
    public static let eventId = "herald.event_id"
    public static let userId = "herald.user_id"
    public static let deviceId = "herald.device_id"
    public static let platform = "herald.platform"
    public static let app = "herald.app"
    public static let token = "herald.token"
    public static let deliveryKey = "herald.delivery_key"
    public static let messageKey = "herald.message_key"
    public static let queue = "herald.queue"
    public static let error = "herald.error"
    public static let code = "herald.code"
    public static let attempts = "herald.attempts"
    public static let retryIn = "herald.retry_in"
    public static let count = "herald.count"
    public static let deadLetterId = "herald.dead_letter_id"

    /// A device token shortened for logs: its first and last four characters.
    public static func shortToken(_ token: String) -> String {
        guard token.count > 12 else { return String(repeating: "*", count: token.count) }
        return "\(token.prefix(4))…\(token.suffix(4))"
    }
}
