/// A strict RFC 8259 JSON reader over UTF-8 bytes with hard limits.
///
/// It never recurses (an explicit stack bounds depth), rejects duplicate keys in an object,
/// control characters in strings, lone surrogates in `\u` escapes, leading zeros and other
/// non-JSON numbers, and trailing garbage. The input must already be valid UTF-8 (the caller
/// validates it once; see ``UTF8Validator``). Not thread-confined: a value type used once.
struct JSONParser {
    struct Limits {
        var maxDepth: Int
    }

    typealias SyntaxError = JSONSyntaxError

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0
    private let limits: Limits

    private init(bytes: UnsafeBufferPointer<UInt8>, limits: Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    /// Parses one JSON document that must fill `bytes` (surrounding whitespace allowed).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, limits: Limits) throws(SyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, limits: limits)
        let value = try parser.parseDocument()
        return value
    }

    static func parse(_ bytes: [UInt8], limits: Limits) throws(SyntaxError) -> JSONValue {
        let result: Result<JSONValue, SyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(SyntaxError) {
                return .success(try parse(buffer, limits: limits))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: - Containers without recursion

    /// An open array or object. Mutated in place on the stack (never copied out), so that
    /// appending stays O(1) however many items a container has.
    private struct Frame {
        var isObject: Bool
        var items: [JSONValue] = []
        var members: [String: JSONValue] = [:]
        var pendingKey = ""
    }

    private mutating func parseDocument() throws(SyntaxError) -> JSONValue {
        var stack: [Frame] = []
        skipWhitespace()
        var value: JSONValue
        outer: while true {
            // Parse one value; an opening bracket pushes a frame and goes on with its first item.
            value = .null
            var haveValue = false
            while !haveValue {
                guard i < bytes.count else { throw SyntaxError(offset: i, reason: "unexpected end of document, a value was expected") }
                switch bytes[i] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let isObject = bytes[i] == UInt8(ascii: "{")
                    if stack.count >= limits.maxDepth {
                        throw SyntaxError(code: .tooDeep, offset: i, reason: "nesting deeper than \(limits.maxDepth) levels")
                    }
                    i += 1
                    skipWhitespace()
                    if peek(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i += 1
                        value = isObject ? .object([:]) : .array([])
                        haveValue = true
                    } else {
                        var frame = Frame(isObject: isObject)
                        if isObject { frame.pendingKey = try parseKey() }
                        stack.append(frame)
                    }
                default:
                    value = try parseScalar()
                    haveValue = true
                }
            }
            // Attach the value to the innermost container, closing as many as end here.
            while true {
                skipWhitespace()
                guard !stack.isEmpty else { break outer }
                let top = stack.count - 1
                guard i < bytes.count else {
                    throw SyntaxError(offset: i, reason: "unexpected end of document inside \(stack[top].isObject ? "an object" : "an array")")
                }
                if stack[top].isObject {
                    let key = stack[top].pendingKey
                    stack[top].members[key] = value
                    if bytes[i] == UInt8(ascii: ",") {
                        i += 1
                        skipWhitespace()
                        let keyOffset = i
                        let next = try parseKey()
                        if stack[top].members[next] != nil {
                            throw SyntaxError(offset: keyOffset, reason: "duplicate key in an object")
                        }
                        stack[top].pendingKey = next
                        continue outer
                    } else if bytes[i] == UInt8(ascii: "}") {
                        i += 1
                        value = .object(stack.removeLast().members)
                        continue
                    }
                    throw SyntaxError(offset: i, reason: "expected ',' or '}' in an object")
                } else {
                    stack[top].items.append(value)
                    if bytes[i] == UInt8(ascii: ",") {
                        i += 1
                        skipWhitespace()
                        continue outer
                    } else if bytes[i] == UInt8(ascii: "]") {
                        i += 1
                        value = .array(stack.removeLast().items)
                        continue
                    }
                    throw SyntaxError(offset: i, reason: "expected ',' or ']' in an array")
                }
            }
        }
        skipWhitespace()
        if i != bytes.count {
            throw SyntaxError(offset: i, reason: "unexpected content after the end of the document")
        }
        return value
    }

    /// `"key" :` — leaves the cursor after the colon.
    private mutating func parseKey() throws(SyntaxError) -> String {
        guard peek(UInt8(ascii: "\"")) else { throw SyntaxError(offset: i, reason: "expected a string key in an object") }
        let key = try parseString()
        skipWhitespace()
        guard peek(UInt8(ascii: ":")) else { throw SyntaxError(offset: i, reason: "expected ':' after an object key") }
        i += 1
        skipWhitespace()
        return key
    }

    // MARK: - Scalars

    private mutating func parseScalar() throws(SyntaxError) -> JSONValue {
        switch bytes[i] {
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw SyntaxError(offset: i, reason: "unexpected character, a value was expected")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(SyntaxError) {
        let start = i
        let count = literal.utf8CodeUnitCount
        guard i + count <= bytes.count else { throw SyntaxError(offset: start, reason: "invalid literal") }
        let p = literal.utf8Start
        for k in 0..<count where bytes[i + k] != p[k] {
            throw SyntaxError(offset: start, reason: "invalid literal")
        }
        i += count
    }

    private mutating func parseNumber() throws(SyntaxError) -> String {
        let start = i
        if peek(UInt8(ascii: "-")) { i += 1 }
        guard i < bytes.count, isDigit(bytes[i]) else { throw SyntaxError(offset: start, reason: "invalid number") }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if i < bytes.count, isDigit(bytes[i]) { throw SyntaxError(offset: start, reason: "invalid number: leading zero") }
        } else {
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if peek(UInt8(ascii: ".")) {
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw SyntaxError(offset: start, reason: "invalid number: digits expected after '.'") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw SyntaxError(offset: start, reason: "invalid number: exponent digits expected") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
    }

    /// A string starting at the opening quote. Unescaped runs are copied as byte ranges.
    private mutating func parseString() throws(SyntaxError) -> String {
        let open = i
        i += 1
        var runStart = i
        // Fast path: no escapes.
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<i]), as: UTF8.self)
                i += 1
                return s
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw SyntaxError(offset: i, reason: "unescaped control character in a string") }
            i += 1
        }
        var out: [UInt8] = []
        out.reserveCapacity(i - runStart + 16)
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
        runStart = i
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b < 0x20 { throw SyntaxError(offset: i, reason: "unescaped control character in a string") }
            if b != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
            let escapeOffset = i
            i += 1
            guard i < bytes.count else { break }
            switch bytes[i] {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                i += 1
                var scalar = try parseHex4(at: escapeOffset)
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw SyntaxError(offset: escapeOffset, reason: "lone UTF-16 surrogate in a \\u escape")
                    }
                    i += 2
                    let low = try parseHex4(at: escapeOffset)
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw SyntaxError(offset: escapeOffset, reason: "lone UTF-16 surrogate in a \\u escape")
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw SyntaxError(offset: escapeOffset, reason: "lone UTF-16 surrogate in a \\u escape")
                }
                appendUTF8(scalar, to: &out)
                runStart = i
                continue
            default:
                throw SyntaxError(offset: escapeOffset, reason: "invalid escape sequence in a string")
            }
            i += 1
            runStart = i
        }
        throw SyntaxError(offset: open, reason: "unterminated string")
    }

    private mutating func parseHex4(at escapeOffset: Int) throws(SyntaxError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw SyntaxError(offset: escapeOffset, reason: "truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw SyntaxError(offset: escapeOffset, reason: "invalid hex digit in a \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    private mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    private func peek(_ b: UInt8) -> Bool { i < bytes.count && bytes[i] == b }
    private func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}

/// Appends the UTF-8 encoding of a scalar known to be valid (not a surrogate, ≤ U+10FFFF).
func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
    switch scalar {
    case 0..<0x80:
        out.append(UInt8(scalar))
    case 0x80..<0x800:
        out.append(UInt8(0xC0 | (scalar >> 6)))
        out.append(UInt8(0x80 | (scalar & 0x3F)))
    case 0x800..<0x10000:
        out.append(UInt8(0xE0 | (scalar >> 12)))
        out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
        out.append(UInt8(0x80 | (scalar & 0x3F)))
    default:
        out.append(UInt8(0xF0 | (scalar >> 18)))
        out.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
        out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
        out.append(UInt8(0x80 | (scalar & 0x3F)))
    }
}
