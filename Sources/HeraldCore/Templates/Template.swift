/// One notification template: event id × culture × platform → title and body text, plus the
/// event's ``EventMetadata``. A plain value that the store persists and the catalog compiles.
public struct Template: Sendable, Codable, Hashable {
    public var eventId: String
    /// `ru-RU`, `en-US`, or a language alone (`ru`).
    public var culture: String
    public var platform: Platform
    /// Title text; may use `{n}` placeholders. Empty: no title (modern payloads send the body
    /// alone; legacy payloads never carry a title).
    public var title: String
    /// Body text; may use `{n}` placeholders (seed 000: `Баланс пользователя {0}: {1}`).
    public var body: String
    public var metadata: EventMetadata

    public init(eventId: String, culture: String, platform: Platform, title: String, body: String, metadata: EventMetadata) {
        self.eventId = eventId
        self.culture = culture
        self.platform = platform
        self.title = title
        self.body = body
        self.metadata = metadata
    }
}
