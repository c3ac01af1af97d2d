import HeraldSupport

/// Why a bus message could not be decoded into an ``Event``: which field and why. Its
/// ``description`` is the dead-letter reason; it never contains payload text (the offending
/// value, when there is one, appears only in ``debugDescription``).
public struct EventDecodingError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<EventDecodingError>

    public var code: Code
    /// The field, as a path in the document's own syntax: `EventType`,
    /// `EventFilters/Filter[2]/@value` (XML, 1-based like XPath), `EventParams[0].Value` (JSON,
    /// 0-based), or `document` for problems of the whole document.
    public var field: String
    /// Why, in words, without payload text.
    public var reason: String
    /// The format being decoded, when known.
    public var format: EventFormat?
    /// Byte offset in the document, when known.
    public var offset: Int?
    /// The offending value (at most 64 characters), for `debugDescription` only.
    public var value: String?

    public init(code: Code, field: String, reason: String, format: EventFormat? = nil, offset: Int? = nil, value: String? = nil) {
        self.code = code
        self.field = field
        self.reason = reason
        self.format = format
        self.offset = offset
        self.value = value.map { $0.count > 64 ? String($0.prefix(64)) + "…" : $0 }
    }

    /// `invalidValue at EventType: must be one of Message, News, Notification, System`.
    public var description: String { "\(code) at \(field): \(reason)" }

    public var debugDescription: String {
        var s = "EventDecodingError(code: \(code), field: \(field), reason: \(reason)"
        if let format { s += ", format: \(format)" }
        if let offset { s += ", offset: \(offset)" }
        if let value { s += ", value: \(String(reflecting: value))" }
        return s + ")"
    }
}

extension ErrorCode where Domain == EventDecodingError {
    /// The document is larger than ``DecodingLimits/maxDocumentBytes``.
    public static let tooLarge = Self("tooLarge")
    /// The bytes are not valid UTF-8.
    public static let invalidUTF8 = Self("invalidUTF8")
    /// UTF-16/32 input, or a declared charset/encoding other than UTF-8.
    public static let unsupportedEncoding = Self("unsupportedEncoding")
    /// Neither XML nor JSON (empty, or starts with something else).
    public static let unknownFormat = Self("unknownFormat")
    /// XML or JSON syntax error.
    public static let malformedDocument = Self("malformedDocument")
    /// A DTD, an entity declaration or an undefined entity reference.
    public static let forbiddenConstruct = Self("forbiddenConstruct")
    /// Nesting depth, attribute count, filter or parameter count or a field's length above
    /// its limit.
    public static let limitExceeded = Self("limitExceeded")
    /// The root is not `PushNotification` (XML) or not an object (JSON).
    public static let unexpectedRoot = Self("unexpectedRoot")
    /// A required field is absent.
    public static let missingField = Self("missingField")
    /// A field that may appear once appears more than once.
    public static let duplicateField = Self("duplicateField")
    /// A field has the wrong JSON type (e.g. an object where a string is expected).
    public static let wrongType = Self("wrongType")
    /// A field's value is not acceptable (unknown EventType, bad EventDateTime, empty id…).
    public static let invalidValue = Self("invalidValue")
}
