/// A template filled with an event's parameters: what the payload builder turns into APNs or FCM
/// JSON.
public struct RenderedNotification: Sendable, Codable, Hashable {
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

    public init(eventId: String, culture: String, platform: Platform, title: String, body: String, metadata: EventMetadata, isSilent: Bool) {
        self.eventId = eventId
        self.culture = culture
        self.platform = platform
        self.title = title
        self.body = body
        self.metadata = metadata
        self.isSilent = isSilent
    }
}
