/// A notification text with positional placeholders, compiled once and rendered many times.
///
/// Syntax (the subset of .NET `String.Format` that seed 000's templates use):
/// `{0}`, `{1}`, … insert the event's parameters by position; `{{` and `}}` are literal braces.
/// Anything else in braces (`{name}`, `{0:N2}`, `{0,10}`) is an ``TemplateError/Code/unknownPlaceholder``
/// at compile time; an unclosed `{` or a lone `}` is ``TemplateError/Code/malformedTemplate``.
/// Rendering with fewer parameters than a placeholder needs is
/// ``TemplateError/Code/missingParameter`` — never a silent blank. Extra parameters are fine:
/// seed 000's texts use none, and the parameters still travel in the payload.
public struct TextTemplate: Sendable, Hashable, Codable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(Int)
    }

    /// The text as written.
    public let source: String
    let segments: [Segment]

    /// Compiles `source`. The thrown error has only ``TemplateError/reason`` set; callers add
    /// the event, culture and platform.
    public init(_ source: String) throws(TemplateError) {
        self.source = source
        var segments: [Segment] = []
        var literal: [UInt8] = []
        let bytes = Array(source.utf8)
        var i = 0
        func flush() {
            if !literal.isEmpty {
                segments.append(.literal(String(decoding: literal, as: UTF8.self)))
                literal.removeAll(keepingCapacity: true)
            }
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "{") {
                if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "{") {
                    literal.append(b)
                    i += 2
                    continue
                }
                guard let close = bytes[(i + 1)...].firstIndex(of: UInt8(ascii: "}")) else {
                    throw TemplateError(code: .malformedTemplate, reason: "unclosed '{' at byte offset \(i)")
                }
                let inner = bytes[(i + 1)..<close]
                if inner.contains(UInt8(ascii: "{")) {
                    throw TemplateError(code: .malformedTemplate, reason: "unclosed '{' at byte offset \(i)")
                }
                let text = String(decoding: bytes[i...close], as: UTF8.self)
                guard !inner.isEmpty, inner.count <= 4, inner.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                    let why =
                        inner.contains(UInt8(ascii: ":")) || inner.contains(UInt8(ascii: ","))
                        ? "format and alignment components are not supported" : "placeholders are {0}, {1}, …"
                    throw TemplateError(code: .unknownPlaceholder, reason: "unknown placeholder \(text.prefix(40)): \(why)")
                }
                flush()
                segments.append(.parameter(inner.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }))
                i = close + 1
            } else if b == UInt8(ascii: "}") {
                guard i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "}") else {
                    throw TemplateError(code: .malformedTemplate, reason: "unescaped '}' at byte offset \(i) (write '}}' for a literal brace)")
                }
                literal.append(b)
                i += 2
            } else {
                literal.append(b)
                i += 1
            }
        }
        flush()
        self.segments = segments
    }

    /// The highest `{n}` used, or `nil` when the text has no placeholder.
    public var highestParameterIndex: Int? {
        segments.compactMap { if case .parameter(let n) = $0 { n } else { nil } }.max()
    }

    /// The text with `{n}` replaced by `parameters[n]`.
    public func render(_ parameters: [String]) throws(TemplateError) -> String {
        try render(parameterCount: parameters.count) { parameters[$0] }
    }

    /// The text with `{n}` replaced by the value of the event's n-th parameter (no array of
    /// the values per render).
    func render(eventParameters parameters: [EventParameter]) throws(TemplateError) -> String {
        try render(parameterCount: parameters.count) { parameters[$0].value }
    }

    /// Measures first, then writes into one allocation (appending would grow it step by step).
    private func render(parameterCount: Int, _ parameter: (Int) -> String) throws(TemplateError) -> String {
        if segments.count == 1, case .literal(let text) = segments[0] { return text }
        var length = 0
        for segment in segments {
            switch segment {
            case .literal(let text):
                length += text.utf8.count
            case .parameter(let n):
                guard n < parameterCount else {
                    throw TemplateError(code: .missingParameter, reason: "placeholder {\(n)} needs \(n + 1) parameters, the event has \(parameterCount)")
                }
                length += parameter(n).utf8.count
            }
        }
        var out = ""
        out.reserveCapacity(length)
        for segment in segments {
            switch segment {
            case .literal(let text): out += text
            case .parameter(let n): out += parameter(n)
            }
        }
        return out
    }

    public var description: String { source }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let source = try container.decode(String.self)
        do {
            try self.init(source)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.reason)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(source)
    }
}
