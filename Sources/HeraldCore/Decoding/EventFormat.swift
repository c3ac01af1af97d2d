/// The two bus formats of seed 000.
public enum EventFormat: String, Sendable, Codable, Hashable, CustomStringConvertible {
    case xml
    case json

    public var description: String { rawValue }

    /// The format a MIME type names (`application/xml`, `text/xml`, `*+xml`, `application/json`,
    /// `text/json`, `*+json`), or `nil` for anything else (then the decoder looks at the bytes).
    public init?(contentType: String) {
        // What producers send, answered without taking the string apart (every message asks).
        switch contentType {
        case "application/xml": self = .xml
        case "application/json": self = .json
        default: self.init(parsing: contentType)
        }
    }

    private init?(parsing contentType: String) {
        let mime = contentType.split(separator: ";", maxSplits: 1).first.map { String($0).trimmingSpaces.asciiLowercased } ?? ""
        switch mime {
        case "application/xml", "text/xml": self = .xml
        case "application/json", "text/json": self = .json
        default:
            if mime.hasSuffix("+xml") { self = .xml } else if mime.hasSuffix("+json") { self = .json } else { return nil }
        }
    }
}

extension String {
    /// The string without leading and trailing ASCII whitespace (space, tab, CR, LF).
    var trimmingSpaces: String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let u = utf8
        guard let first = u.firstIndex(where: { !isSpace($0) }) else { return "" }
        // The byte after the last non-space one is a space or the end: a character boundary.
        let end = u.index(after: u.lastIndex(where: { !isSpace($0) })!)
        if first == u.startIndex && end == u.endIndex { return self }
        return String(self[first..<end])
    }
}
