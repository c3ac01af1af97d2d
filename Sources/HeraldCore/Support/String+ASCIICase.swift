extension StringProtocol {
    /// ASCII case-insensitive equality without allocating. Field and filter names of the bus
    /// formats are ASCII; non-ASCII bytes must match exactly.
    func asciiCaseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        asciiBytesEqualIgnoringCase(utf8, other.utf8)
    }
}

extension String {
    /// Concrete overload: the generic one is not specialized across every call site, and this
    /// runs for every element, attribute and filter name of every event. Names usually come in
    /// the expected case: `==` (a compare of the small strings' raw bits) answers those first.
    func asciiCaseInsensitiveEquals(_ other: String) -> Bool {
        self == other || asciiBytesEqualIgnoringCase(utf8, other.utf8)
    }
}

extension Substring {
    func asciiCaseInsensitiveEquals(_ other: String) -> Bool {
        asciiBytesEqualIgnoringCase(utf8, other.utf8)
    }
}

@inline(__always)
func asciiBytesEqualIgnoringCase<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
    guard a.count == b.count else { return false }
    var i = a.startIndex
    var j = b.startIndex
    while i != a.endIndex {
        let x = a[i]
        let y = b[j]
        if x != y && asciiLower(x) != asciiLower(y) { return false }
        a.formIndex(after: &i)
        b.formIndex(after: &j)
    }
    return true
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
