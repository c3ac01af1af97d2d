extension JSONValue {
    /// Canonical compact JSON: object keys sorted by their UTF-8 bytes, no insignificant
    /// whitespace, strings escaped minimally (`"`, `\`, control characters; `/` and non-ASCII are
    /// written as they are). The same value always gives the same bytes, which golden tests and
    /// the payload size limits rely on.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// The canonical bytes as a `String` (always valid UTF-8).
    public func serializedString() -> String {
        String(decoding: serialized(), as: UTF8.self)
    }

    /// Human-readable JSON with sorted keys and two-space indentation, for `herald preview` and
    /// logs. Arrays and objects that are empty print as `[]` and `{}`.
    public func prettyPrinted() -> String {
        var out: [UInt8] = []
        write(to: &out, indent: 2, level: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// The byte count of ``serialized()`` (computed by serializing).
    public var serializedByteCount: Int { serialized().count }

    private func write(to out: inout [UInt8], indent: Int?, level: Int) {
        switch self {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let b):
            out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let literal):
            out.append(contentsOf: literal.utf8)
        case .string(let s):
            JSONValue.writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            if items.isEmpty {
                out.append(UInt8(ascii: "]"))
                return
            }
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.newline(&out, indent: indent, level: level + 1)
                item.write(to: &out, indent: indent, level: level + 1)
            }
            JSONValue.newline(&out, indent: indent, level: level)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            if members.isEmpty {
                out.append(UInt8(ascii: "}"))
                return
            }
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.newline(&out, indent: indent, level: level + 1)
                JSONValue.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(UInt8(ascii: " ")) }
                members[key]!.write(to: &out, indent: indent, level: level + 1)
            }
            JSONValue.newline(&out, indent: indent, level: level)
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ out: inout [UInt8], indent: Int?, level: Int) {
        guard let indent else { return }
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * level))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes `s` as a JSON string literal: runs that need no escape are copied whole.
    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Native strings are read in place; only a bridged one is copied first.
        if s.utf8.withContiguousStorageIfAvailable({ writeEscaped($0, to: &out) }) == nil {
            var s = s
            s.withUTF8 { writeEscaped($0, to: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A string given as its UTF-8 bytes (JSON text written into a string member), without
    /// making a `String` of them first.
    static func writeString(utf8: [UInt8], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        utf8.withUnsafeBufferPointer { writeEscaped($0, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    private static func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for (index, b) in utf8.enumerated() where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            runStart = index + 1
            out.append(UInt8(ascii: "\\"))
            switch b {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            case 0x08: out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "f"))
            default:
                out.append(contentsOf: "u00".utf8)
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0x0F)])
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }

    /// The byte count of `s` written as a JSON string literal, quotes included, without
    /// building it.
    static func stringLiteralByteCount(_ s: String) -> Int {
        var n = 2
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09, 0x08, 0x0C: n += 2
            case 0..<0x20: n += 6
            default: n += 1
            }
        }
        return n
    }
}
