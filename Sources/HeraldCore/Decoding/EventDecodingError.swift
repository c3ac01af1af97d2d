/// Why a bus message could not be decoded into an ``Event``: which field and why. Its
/// ``description`` is the dead-letter reason; it never contains payload text (the offending
/// value, when there is one, appears only in ``debugDescription``).
public struct EventDecodingError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Extensible error code: new codes can be added without breaking anybody's `switch`.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The document is larger than ``DecodingLimits/maxDocumentBytes``.
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// The bytes are not valid UTF-8.
        public static let invalidUTF8 = Code(rawValue: "invalidUTF8")
        /// UTF-16/32 input, or a declared charset/encoding other than UTF-8.
        public static let unsupportedEncoding = Code(rawValue: "unsupportedEncoding")
        /// Neither XML nor JSON (empty, or starts with something else).
        public static let unknownFormat = Code(rawValue: "unknownFormat")
        /// XML or JSON syntax error.
        public static let malformedDocument = Code(rawValue: "malformedDocument")
        /// A DTD, an entity declaration or an undefined entity reference.
        public static let forbiddenConstruct = Code(rawValue: "forbiddenConstruct")
        /// Nesting depth, attribute count, filter or parameter count or a field's length above
        /// its limit.
        public static let limitExceeded = Code(rawValue: "limitExceeded")
        /// The root is not `PushNotification` (XML) or not an object (JSON).
        public static let unexpectedRoot = Code(rawValue: "unexpectedRoot")
        /// A required field is absent.
        public static let missingField = Code(rawValue: "missingField")
        /// A field that may appear once appears more than once.
        public static let duplicateField = Code(rawValue: "duplicateField")
        /// A field has the wrong JSON type (e.g. an object where a string is expected).
        public static let wrongType = Code(rawValue: "wrongType")
        /// A field's value is not acceptable (unknown EventType, bad EventDateTime, empty id…).
        public static let invalidValue = Code(rawValue: "invalidValue")
    }

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
