extension JSONValue {
    /// Reads one JSON document from outside (an API request body) with the rules event intake
    /// applies: UTF-8 only, RFC 8259 strictly, an object with the same key twice refused,
    /// numbers kept as their literal text (see ``integerValue``), nesting at most `maxDepth`.
    /// - Throws: ``JSONSyntaxError`` with the reason and the byte offset.
    public init(parsing bytes: [UInt8], maxDepth: Int) throws(JSONSyntaxError) {
        if let bad = UTF8Validator.firstInvalidOffset(bytes) {
            throw JSONSyntaxError(code: .invalidUTF8, offset: bad, reason: "invalid UTF-8")
        }
        self = try JSONParser.parse(bytes, limits: .init(maxDepth: maxDepth))
    }

    /// The exact value of a number that is whole and fits an `Int`, however it is written
    /// (`100`, `100.0`, `1e2`, `-0`); `nil` for a fraction, a number out of range, or a value
    /// that is no number. Exact: no `Double` in between, so `9007199254740993` stays itself.
    public var integerValue: Int? {
        guard case .number(let literal) = self else { return nil }
        if let plain = Int(literal) { return plain }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var exponent = 0
        var exponentOverflow = false
        var bytes = literal.utf8[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        while let b = bytes.first, Self.isDigit(b) { digits.append(b); bytes = bytes.dropFirst() }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            while let b = bytes.first, Self.isDigit(b) { digits.append(b); fractionDigits += 1; bytes = bytes.dropFirst() }
        }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            let negativeExponent = bytes.first == UInt8(ascii: "-")
            if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            while let b = bytes.first, Self.isDigit(b) {
                if exponent > 1_000_000_000 { exponentOverflow = true } else { exponent = exponent * 10 + Int(b - UInt8(ascii: "0")) }
                bytes = bytes.dropFirst()
            }
            if negativeExponent { exponent = -exponent }
        }
        guard bytes.isEmpty, !digits.isEmpty else { return nil }
        // digits × 10^scale, without leading or trailing zeros.
        guard let first = digits.firstIndex(where: { $0 != UInt8(ascii: "0") }) else { return 0 }
        var significant = digits[first...]
        var scale = exponent - fractionDigits
        while significant.last == UInt8(ascii: "0") { significant = significant.dropLast(); scale += 1 }
        guard !exponentOverflow, scale >= 0, significant.count + scale <= 19 else { return nil }
        let text = (negative ? "-" : "") + String(decoding: significant, as: UTF8.self) + String(repeating: "0", count: scale)
        return Int(text)
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}
