/// The kind of an event (seed 000: `EventType – {Message|News|Notification|System}`).
///
/// `News` without a `UserId` filter (or with `UserId 0`) is a broadcast; `System` events are
/// delivered silently (APNs background push, FCM data-only) in the modern payload profile.
public enum EventType: String, Sendable, Codable, Hashable, CaseIterable {
    case message = "Message"
    case news = "News"
    case notification = "Notification"
    case system = "System"

    /// Parses a name ASCII case-insensitively ("message", "MESSAGE" and "Message" are one).
    public init?(name: some StringProtocol) {
        if let exact = EventType(rawValue: String(name)) {
            self = exact
            return
        }
        guard let match = EventType.allCases.first(where: { $0.rawValue.asciiCaseInsensitiveEquals(name) }) else { return nil }
        self = match
    }
}
