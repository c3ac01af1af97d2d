import HeraldSupport

/// A template filled with an event's parameters: what the payload builder turns into APNs or FCM
/// JSON.
public struct RenderedNotification: Sendable, Codable, Hashable {
    /// What the properties below read and write (coded as they are, with the same keys).
    private struct Fields: Sendable, Codable, Hashable {
        var eventId: String
        var culture: String
        var platform: Platform
        var title: String
        var body: String
        var metadata: EventMetadata
        var isSilent: Bool
    }

    /// Shared by every copy (``Shared``).
    private var storage: Shared<Fields>

    public var eventId: String {
        get { storage.value.eventId }
        set { storage.value.eventId = newValue }
    }
    /// The culture of the template that was used (after fallback).
    public var culture: String {
        get { storage.value.culture }
        set { storage.value.culture = newValue }
    }
    public var platform: Platform {
        get { storage.value.platform }
        set { storage.value.platform = newValue }
    }
    /// Empty when the template has no title.
    public var title: String {
        get { storage.value.title }
        set { storage.value.title = newValue }
    }
    public var body: String {
        get { storage.value.body }
        set { storage.value.body = newValue }
    }
    public var metadata: EventMetadata {
        get { storage.value.metadata }
        set { storage.value.metadata = newValue }
    }
    /// No alert: the metadata says so, or the event is a `System` event.
    public var isSilent: Bool {
        get { storage.value.isSilent }
        set { storage.value.isSilent = newValue }
    }

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
