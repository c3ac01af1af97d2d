/// Why no payload could be built. Its ``description`` never contains payload text or tokens.
public struct PayloadError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Over the provider's limit even with the body shortened to "…" (too many or too long
        /// parameters, title, or custom keys).
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// The recipient's platform differs from the rendered notification's.
        public static let platformMismatch = Code(rawValue: "platformMismatch")
    }

    public var code: Code
    public var eventId: String
    public var platform: Platform
    public var reason: String

    public var description: String { "\(code) for event \(eventId.prefix(128)) (platform \(platform)): \(reason)" }
    public var debugDescription: String { "PayloadError(\(description))" }
}
