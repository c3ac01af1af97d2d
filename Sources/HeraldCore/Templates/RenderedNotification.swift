import HeraldSupport

/// A template filled with an event's parameters: what the payload builder turns into APNs or FCM
/// JSON.
public struct RenderedNotification: SharedStorage, Sendable, Codable, Hashable {
    /// The notification's properties, read and written as its own
    /// (``HeraldSupport/SharedStorage``); coded as they are, with the same keys.
    public struct Fields: Sendable, Codable, Hashable {
        public var eventId: String
        /// The culture of the template that was used (after fallback).
        public var culture: String
        public var platform: Platform
        /// Empty when the template has no title.
        public var title: String
        public var body: String
        public var metadata: EventMetadata
        /// No alert: the metadata says so, or the event is a `System` event.
        public var isSilent: Bool
    }

    /// Shared by every copy (``HeraldSupport/Shared``).
    public var storage: Shared<Fields>

    public init(eventId: String, culture: String, platform: Platform, title: String, body: String, metadata: EventMetadata, isSilent: Bool) {
        storage = Shared(
            Fields(
                eventId: eventId,
                culture: culture,
                platform: platform,
                title: title,
                body: body,
                metadata: metadata,
                isSilent: isSilent
            ))
    }

    public init(from decoder: any Decoder) throws { storage = try Shared(from: decoder) }

    public func encode(to encoder: any Encoder) throws { try storage.encode(to: encoder) }
}
