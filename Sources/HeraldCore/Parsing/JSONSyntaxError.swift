/// Why a JSON document was refused, and where: what ``JSONValue/init(parsing:maxDepth:)``
/// throws. The reason names the rule and never quotes the input, so a caller may show it to
/// whoever sent the document.
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem; a struct with static members, so that new codes break nobody.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String

        /// The bytes are not well-formed UTF-8.
        public static let invalidUTF8 = Code(description: "invalidUTF8")
        /// Not RFC 8259 JSON, or an object with the same key twice.
        public static let malformed = Code(description: "malformed")
        /// Arrays and objects nested deeper than the limit.
        public static let tooDeep = Code(description: "tooDeep")
    }

    public var code: Code = .malformed
    /// The byte offset of the problem in the document.
    public var offset: Int
    public var reason: String

    public var description: String { "\(reason) (byte \(offset))" }
}
