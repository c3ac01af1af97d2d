import HeraldSupport

/// Why a template could not be read, found or rendered. Its ``description`` names the event,
/// culture and platform involved and never contains event parameter values.
public struct TemplateError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<TemplateError>

    public var code: Code
    public var eventId: String?
    public var culture: String?
    public var platform: Platform?
    /// The file or resource involved (`AppleMessages.ru-RU.resx`, `AgentPayment.Title`).
    public var source: String?
    public var reason: String

    /// `noTemplate for event EVENT 006 (culture ru-RU, platform ios): …`.
    public var description: String {
        var s = code.rawValue
        if let eventId { s += " for event \(eventId.prefix(128))" }
        var context: [String] = []
        if let culture { context.append("culture \(culture.prefix(32))") }
        if let platform { context.append("platform \(platform)") }
        if let source { context.append("in \(source.prefix(128))") }
        if !context.isEmpty { s += " (" + context.joined(separator: ", ") + ")" }
        return s + ": " + reason
    }

    public var debugDescription: String { "TemplateError(\(description))" }
}

extension ErrorCode where Domain == TemplateError {
    /// No template for the event in the culture, its language, or the default culture.
    public static let noTemplate = Self("noTemplate")
    /// A placeholder `{n}` refers past the event's last parameter.
    public static let missingParameter = Self("missingParameter")
    /// A placeholder that is not `{n}` (a name, a format or alignment component).
    public static let unknownPlaceholder = Self("unknownPlaceholder")
    /// An unclosed `{` or an unescaped `}`.
    public static let malformedTemplate = Self("malformedTemplate")
    /// A `.resx` document that is not well-formed or not a string resource file.
    public static let invalidResource = Self("invalidResource")
    /// The event metadata file is not valid.
    public static let invalidMetadata = Self("invalidMetadata")
    /// Two templates for one event, culture and platform.
    public static let duplicateTemplate = Self("duplicateTemplate")
    /// A template file name that is not `AndroidMessages.<culture>.resx` or
    /// `AppleMessages.<culture>.resx`.
    public static let invalidFileName = Self("invalidFileName")
}
