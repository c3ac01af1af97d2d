/// The platform and culture of a template file from its name (seed 000):
/// `AndroidMessages.ru-RU.resx` → android, `ru-RU`; `AppleMessages.en-US.resx` → ios, `en-US`.
public struct TemplateFileName: Sendable, Hashable {
    public var platform: Platform
    public var culture: String

    public init(platform: Platform, culture: String) {
        self.platform = platform
        self.culture = culture
    }

    /// Parses a file name (no directory). Throws ``TemplateError/Code/invalidFileName``.
    public init(parsing fileName: String) throws(TemplateError) {
        let parts = fileName.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].asciiCaseInsensitiveEquals("resx") else {
            throw TemplateError(code: .invalidFileName, source: fileName, reason: "expected AndroidMessages.<culture>.resx or AppleMessages.<culture>.resx")
        }
        if parts[0].asciiCaseInsensitiveEquals("AndroidMessages") {
            platform = .android
        } else if parts[0].asciiCaseInsensitiveEquals("AppleMessages") {
            platform = .ios
        } else {
            throw TemplateError(code: .invalidFileName, source: fileName, reason: "the name must start with AndroidMessages or AppleMessages")
        }
        let culture = String(parts[1])
        let subtags = culture.split(separator: "-", omittingEmptySubsequences: false)
        let valid =
            !subtags.isEmpty
            && subtags.allSatisfy { tag in
                (1...8).contains(tag.count)
                    && tag.utf8.allSatisfy {
                        ($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    }
            } && (2...3).contains(subtags[0].count)
        guard valid else {
            throw TemplateError(code: .invalidFileName, source: fileName, reason: "\(culture.prefix(32)) is not a culture name such as ru-RU")
        }
        self.culture = culture
    }

    /// `AndroidMessages.ru-RU.resx`.
    public var fileName: String {
        (platform == .android ? "AndroidMessages" : "AppleMessages") + ".\(culture).resx"
    }
}
