import HeraldSupport

/// Why an event cannot be delivered to anybody by rule (not for lack of matching devices, which
/// is an empty selection). Its ``description`` is the dead-letter reason.
public struct RecipientSelectionError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<RecipientSelectionError>

    public var code: Code
    public var eventId: String
    public var reason: String

    public var description: String { "\(code) for event \(eventId.prefix(64)): \(reason)" }
    public var debugDescription: String { "RecipientSelectionError(code: \(code), eventId: \(String(reflecting: eventId)), reason: \(reason))" }
}

extension ErrorCode where Domain == RecipientSelectionError {
    /// A non-News event without a `UserId` filter while ``SelectionPolicy`` refuses those.
    public static let noAddressee = Self("noAddressee")
}
