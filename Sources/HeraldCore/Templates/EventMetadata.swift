/// What an event's notifications are like, apart from their text: per event id, the same in every
/// culture and on every platform (`templates/events.json`).
public struct EventMetadata: Sendable, Codable, Hashable {
    public var eventId: String
    /// The subscription tag (event category) the event belongs to: `account`, `wallet`,
    /// `payments`, `invoices`, `transfers`, … Subscriptions select and mute by tag; the modern
    /// APNs payload uses it as `thread-id` so that the notifications of one kind group together.
    public var tag: String?
    /// APNs `category` (actionable notification type registered by the app), if any.
    public var category: String?
    /// Where a tap leads.
    public var targetScreen: TargetScreen?
    public var priority: NotificationPriority
    /// A sound name (`default`) for notifications that should be heard: incoming money
    /// (requirement 5). `nil` is silent display.
    public var sound: String?
    /// Sensitive content (money): FCM sends it as a data-only message without text, and the
    /// APNs payload is marked `mutable-content` so that the app can hide details (requirement 12).
    public var isPrivate: Bool
    /// Delivered without any alert (APNs background push, FCM data-only). `System` events are
    /// silent whatever this says.
    public var isSilent: Bool
    /// How long the provider keeps trying to reach an offline device, in seconds; `nil` uses
    /// the provider's default.
    public var timeToLiveSeconds: Int?

    /// The same key names as `templates/events.json`.
    enum CodingKeys: String, CodingKey {
        case eventId, tag, category, targetScreen, priority, sound
        case isPrivate = "private"
        case isSilent = "silent"
        case timeToLiveSeconds = "ttlSeconds"
    }

    public init(
        eventId: String, tag: String? = nil, category: String? = nil, targetScreen: TargetScreen? = nil,
        priority: NotificationPriority = .normal, sound: String? = nil, isPrivate: Bool = false, isSilent: Bool = false,
        timeToLiveSeconds: Int? = nil
    ) {
        self.eventId = eventId
        self.tag = tag
        self.category = category
        self.targetScreen = targetScreen
        self.priority = priority
        self.sound = sound
        self.isPrivate = isPrivate
        self.isSilent = isSilent
        self.timeToLiveSeconds = timeToLiveSeconds
    }

    /// Metadata for an event that has texts but no entry in the metadata file: no tag, normal
    /// priority, no sound, not private, not silent, provider default TTL.
    public static func defaults(for eventId: String) -> EventMetadata {
        EventMetadata(eventId: eventId)
    }
}
