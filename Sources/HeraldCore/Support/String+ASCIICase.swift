extension StringProtocol {
    /// ASCII case-insensitive equality without allocating. Field and filter names of the bus
    /// formats are ASCII; non-ASCII bytes must match exactly.
    func asciiCaseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        var a = utf8.makeIterator()
        var b = other.utf8.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil):
                return true
            case (let x?, let y?):
                if x == y { continue }
                if asciiLower(x) != asciiLower(y) { return false }
            default:
                return false
            }
        }
    }
}

@inline(__always)
func asciiLower(_ b: UInt8) -> UInt8 {
    (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) ? b | 0x20 : b
}

extension String {
    /// The string with ASCII letters lowered (other characters unchanged): a cheap key for
    /// case-insensitive lookups of identifiers such as cultures ("ru-RU" → "ru-ru").
    var asciiLowercased: String {
        if !utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) { return self }
        return String(decoding: utf8.map(asciiLower), as: UTF8.self)
    }
}
