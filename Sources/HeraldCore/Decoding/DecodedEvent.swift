/// The result of decoding one bus message: the event, the format it came in, and notes about
/// anything unusual that was accepted (unknown filter names, ignored fields).
public struct DecodedEvent: Sendable, Hashable {
    public var event: Event
    public var format: EventFormat
    public var notes: [DecodingNote]
}
