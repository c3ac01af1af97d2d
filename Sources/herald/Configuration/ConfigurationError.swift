/// A configuration problem found at start-up. It names the key and where its value came from
/// (file, environment variable or flag) so that an operator can fix it without guessing.
/// Secret values are never part of the message.
struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    struct Code: Sendable, Hashable, CustomStringConvertible {
        let rawValue: String
        static let missing = Code(rawValue: "missing")
        static let invalidValue = Code(rawValue: "invalid_value")
        static let unknownKey = Code(rawValue: "unknown_key")
        static let unreadableFile = Code(rawValue: "unreadable_file")
        static let invalidFile = Code(rawValue: "invalid_file")
        var description: String { rawValue }
    }

    let code: Code
    let key: String?
    let source: String?
    let reason: String

    init(_ code: Code, key: String? = nil, source: String? = nil, reason: String) {
        self.code = code
        self.key = key
        self.source = source
        self.reason = reason
    }

    var description: String {
        var text = "configuration error"
        if let key { text += " in \(key)" }
        if let source { text += " (from \(source))" }
        return text + ": " + reason
    }
}
