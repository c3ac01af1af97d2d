import HeraldCore

/// The `x-herald-error` header of a dead letter: why Herald refused a message, as a stable
/// machine-readable code (the human text is in `x-herald-reason`). Extensible.
public struct DeadLetterCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The body is not a valid event (bad XML or JSON, wrong encoding, a missing or invalid
    /// field, too large).
    public static let undecodable = DeadLetterCode(rawValue: "undecodable")
    /// No template defines the event id.
    public static let unknownEvent = DeadLetterCode(rawValue: "unknown_event")
    /// A recipient's culture and platform have no template, even after culture fallback.
    public static let missingTemplate = DeadLetterCode(rawValue: "missing_template")
    /// A template refers to a parameter the event does not have (`{2}` with two parameters).
    public static let parameterCount = DeadLetterCode(rawValue: "parameter_count")
    /// A template text itself is broken (unclosed brace, a named placeholder).
    public static let invalidTemplate = DeadLetterCode(rawValue: "invalid_template")
    /// A non-News event without any UserId (refused rather than sent to everybody).
    public static let noAddressee = DeadLetterCode(rawValue: "no_addressee")

    /// The code for a rendering error.
    public static func forTemplateError(_ error: TemplateError) -> DeadLetterCode {
        switch error.code {
        case .noTemplate: .missingTemplate
        case .missingParameter: .parameterCount
        default: .invalidTemplate
        }
    }
}
