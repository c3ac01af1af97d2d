import HeraldSupport

/// What an event's notifications are like, apart from their text: per event id, the same in every
/// culture and on every platform (`templates/events.json`).
public struct EventMetadata: SharedStorage, Sendable, Codable, Hashable {
    /// The metadata's properties, read and written as its own (``HeraldSupport/SharedStorage``);
    /// coded as they are, with the keys below.
    public struct Fields: Sendable, Codable, Hashable {
        public var eventId: String
        /// The subscription tag (event category) the event belongs to: `account`, `wallet`,
        /// `payments`, `invoices`, `transfers`, … Subscriptions select and mute by tag; the modern
        /// APNs payload uses it as `thread-id` so that the notifications of one kind group
        /// together.
        public var tag: String?
        /// APNs `category` (actionable notification type registered by the app), if any.
        public var category: String?
        /// Where a tap leads.
        public var targetScreen: TargetScreen?
        public var priority: NotificationPriority
        /// A sound name (`default`) for notifications that should be heard: incoming money
        /// (requirement 5). `nil` is silent display.
        public var sound: String?
        /// The Android notification channel (Android 8+) the app shows the event on, if it names
        /// one: the channel, not the message, decides sound and importance there, so money-in
        /// needs a channel of its own to be heard (requirement 5). Sent as FCM
        /// `android.notification.channel_id` on visible messages and as `data.channel` on
        /// data-only ones (see ``PayloadBuilder``). A channel the app has not created falls back
        /// to its default.
        public var androidChannel: String?
        /// Sensitive content (money): FCM sends it as a data-only message without text, and the
        /// APNs payload is marked `mutable-content` so that the app can hide details
        /// (requirement 12).
        public var isPrivate: Bool
        /// Delivered without any alert (APNs background push, FCM data-only). `System` events are
        /// silent whatever this says.
        public var isSilent: Bool
        /// How long the provider keeps trying to reach an offline device, in seconds; `nil` uses
        /// the provider's default.
        public var timeToLiveSeconds: Int?

        /// The same key names as `templates/events.json`.
        enum CodingKeys: String, CodingKey {
            case eventId, tag, category, targetScreen, priority, sound, androidChannel
            case isPrivate = "private"
            case isSilent = "silent"
            case timeToLiveSeconds = "ttlSeconds"
        }
    }

    /// Shared by every copy (``HeraldSupport/Shared``).
    public var storage: Shared<Fields>

    public init(
        eventId: String, tag: String? = nil, category: String? = nil, targetScreen: TargetScreen? = nil,
        priority: NotificationPriority = .normal, sound: String? = nil, androidChannel: String? = nil, isPrivate: Bool = false,
        isSilent: Bool = false, timeToLiveSeconds: Int? = nil
    ) {
        storage = Shared(
            Fields(
                eventId: eventId,
                tag: tag,
                category: category,
                targetScreen: targetScreen,
                priority: priority,
                sound: sound,
                androidChannel: androidChannel,
                isPrivate: isPrivate,
                isSilent: isSilent,
                timeToLiveSeconds: timeToLiveSeconds
            ))
    }

    /// Metadata for an event that has texts but no entry in the metadata file: no tag, normal
    /// priority, no sound, not private, not silent, provider default TTL.
    public static func defaults(for eventId: String) -> EventMetadata {
        EventMetadata(eventId: eventId)
    }

    public init(from decoder: any Decoder) throws { storage = try Shared(from: decoder) }

    public func encode(to encoder: any Encoder) throws { try storage.encode(to: encoder) }
}
