import HeraldSupport

/// Why no payload could be built. Its ``description`` never contains payload text or tokens.
public struct PayloadError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<PayloadError>

    public var code: Code
    public var eventId: String
    public var platform: Platform
    public var reason: String

    public var description: String { "\(code) for event \(eventId.prefix(128)) (platform \(platform)): \(reason)" }
    public var debugDescription: String { "PayloadError(\(description))" }
}

extension ErrorCode where Domain == PayloadError {
    /// Over the provider's limit even with the body shortened to "…" (too many or too long
    /// parameters, title, or custom keys).
    public static let tooLarge = Self("tooLarge")
    /// The recipient's platform differs from the rendered notification's.
    public static let platformMismatch = Self("platformMismatch")
}
