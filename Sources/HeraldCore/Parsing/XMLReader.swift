/// A small, strict, non-validating XML 1.0 reader for the documents Herald accepts: elements,
/// attributes, character data, CDATA, comments, processing instructions and the XML declaration.
///
/// It is deliberately safer than a general parser: any `<!DOCTYPE` (and so every DTD, external
/// entity and entity-expansion bomb) is refused, only the five predefined entities and numeric
/// character references are resolved, nesting depth is bounded, and it never recurses. Input must
/// be valid UTF-8 (validated by the caller). A value type used once; no shared state.
///
/// It reports elements to an ``XMLContentHandler`` as it meets them, so that a reader that needs
/// a few fields (the event reader, for every bus message) builds no tree; ``parse(_:limits:)``
/// builds the whole ``XElement`` tree for those that want it (templates).
struct XMLReader {
    struct Limits {
        var maxDepth: Int
        /// Attributes on one element; the duplicate check is linear, so this also bounds its cost.
        var maxAttributes: Int = 64
    }

    struct SyntaxError: Error {
        enum Kind { case syntax, forbidden, depth, encoding }
        var offset: Int
        var reason: String
        var kind: Kind = .syntax
        /// Names of the elements open where the error was found, outermost first.
        var openElements: [String] = []
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0
    private let limits: Limits
    private var stack: [Frame] = []
    /// Character data of elements whose handler does not want it: still checked, then dropped.
    private var discarded: [UInt8] = []
    /// The attributes of the start tag being read (one buffer for the document).
    private var attributes: [XElement.Attribute] = []

    private init(bytes: UnsafeBufferPointer<UInt8>, limits: Limits) {
        self.bytes = bytes
        self.limits = limits
        stack.reserveCapacity(Swift.min(limits.maxDepth, 8))
    }

    /// The document's root element, with every descendant.
    static func parse(_ bytes: [UInt8], limits: Limits) throws(SyntaxError) -> XElement {
        var builder = XMLTreeBuilder()
        try parse(bytes, limits: limits, into: &builder)
        // A document that parsed has exactly one root element.
        return builder.root!
    }

    /// Reports the document's elements to `handler`, in document order. The handler has seen a
    /// prefix of the document when this throws.
    static func parse<Handler: XMLContentHandler>(_ bytes: [UInt8], limits: Limits, into handler: inout Handler) throws(SyntaxError) {
        try bytes.withUnsafeBufferPointer { buffer throws(SyntaxError) in try parse(buffer, limits: limits, into: &handler) }
    }

    /// ``parse(_:limits:into:)`` of bytes valid for the call (a message body read in place).
    static func parse<Handler: XMLContentHandler>(
        _ bytes: UnsafeBufferPointer<UInt8>, limits: Limits, into handler: inout Handler
    ) throws(SyntaxError) {
        var reader = XMLReader(bytes: bytes, limits: limits)
        do throws(SyntaxError) {
            try reader.parseDocument(into: &handler)
        } catch {
            var error = error
            error.openElements = reader.stack.map { reader.string(in: $0.name) }
            throw error
        }
    }

    /// An open element: where its name is in the document, and its character data if wanted:
    /// where it is in the document while it is one run of bytes to take as they are (the usual
    /// case: no copy), else a copy with references resolved and line ends normalised.
    private struct Frame {
        var name: Range<Int>
        var offset: Int
        var wantsText: Bool
        var run: Range<Int>?
        var text: [UInt8] = []

        init(name: Range<Int>, offset: Int, wantsText: Bool) {
            self.name = name
            self.offset = offset
            self.wantsText = wantsText
        }
    }

    // MARK: - Document

    private mutating func parseDocument<Handler: XMLContentHandler>(into handler: inout Handler) throws(SyntaxError) {
        i = UTF8Validator.byteOrderMarkLength(bytes)
        if startsWith("<?xml"), i + 5 < bytes.count, isWhitespace(bytes[i + 5]) {
            try parseDeclaration()
        }
        var sawRoot = false
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "<") {
                // The byte after `<` tells the markup apart; most are start and end tags.
                let next = i + 1 < bytes.count ? bytes[i + 1] : 0
                let bang = next == UInt8(ascii: "!")
                if bang && startsWith("<!--") {
                    try skipPast("-->", what: "comment")
                } else if bang && startsWith("<![CDATA[") {
                    guard !stack.isEmpty else { throw SyntaxError(offset: i, reason: "CDATA section outside the root element") }
                    let start = i + 9
                    i = start
                    let end = try find("]]>", what: "CDATA section")
                    var text = takeText()
                    try appendChecked(start..<end, to: &text)
                    putText(text)
                    i = end + 3
                } else if bang {
                    throw SyntaxError(offset: i, reason: "document type declarations (DTD, entities) are not allowed", kind: .forbidden)
                } else if next == UInt8(ascii: "?") {
                    let start = i
                    i += 2
                    let target = parseName()
                    if asciiBytesEqualIgnoringCase(slice(target), "xml".utf8) {
                        throw SyntaxError(offset: start, reason: "XML declaration not at the start of the document")
                    }
                    try skipPast("?>", what: "processing instruction")
                } else if next == UInt8(ascii: "/") {
                    let start = i
                    i += 2
                    let name = parseName()
                    skipWhitespace()
                    guard peek(UInt8(ascii: ">")) else { throw SyntaxError(offset: i, reason: "expected '>' to close the end tag") }
                    i += 1
                    guard let open = stack.last else { throw SyntaxError(offset: start, reason: "end tag without a start tag") }
                    guard slice(open.name).elementsEqual(slice(name)) else {
                        throw SyntaxError(
                            offset: start,
                            reason:
                                "<\(string(in: open.name).prefix(64))> opened at \(XMLReader.position(of: open.offset, in: bytes)) is not closed before </\(string(in: name).prefix(64))>"
                        )
                    }
                    let frame = stack.removeLast()
                    if let run = frame.run {
                        handler.endElement(text: slice(run), depth: stack.count)
                    } else {
                        frame.text.withUnsafeBufferPointer { handler.endElement(text: $0, depth: stack.count) }
                    }
                } else {
                    let start = i
                    if sawRoot && stack.isEmpty { throw SyntaxError(offset: i, reason: "more than one root element") }
                    if stack.count >= limits.maxDepth {
                        throw SyntaxError(offset: i, reason: "elements nested deeper than \(limits.maxDepth) levels", kind: .depth)
                    }
                    i += 1
                    let name = parseName()
                    guard !name.isEmpty else { throw SyntaxError(offset: start, reason: "invalid element name") }
                    try parseAttributes()
                    let closes = startsWith("/>")
                    guard closes || peek(UInt8(ascii: ">")) else {
                        throw SyntaxError(offset: i, reason: "expected '>' or '/>' in the start tag of <\(string(in: name).prefix(64))>")
                    }
                    i += closes ? 2 : 1
                    sawRoot = true
                    let depth = stack.count
                    let wantsText = handler.startElement(name: slice(name), attributes: attributes, offset: start, depth: depth)
                    if closes {
                        handler.endElement(text: UnsafeBufferPointer(start: nil, count: 0), depth: depth)
                    } else {
                        stack.append(Frame(name: name, offset: start, wantsText: wantsText))
                    }
                }
            } else if stack.isEmpty {
                guard isWhitespace(b) else {
                    throw SyntaxError(offset: i, reason: sawRoot ? "text after the root element" : "text before the root element")
                }
                i += 1
            } else if stack[stack.count - 1].wantsText, stack[stack.count - 1].run == nil, stack[stack.count - 1].text.isEmpty,
                let run = plainRun()
            {
                stack[stack.count - 1].run = run
            } else {
                var text = takeText()
                try parseCharacterData(into: &text)
                putText(text)
            }
        }
        if let open = stack.last {
            throw SyntaxError(offset: open.offset, reason: "unexpected end of document: <\(string(in: open.name).prefix(64))> is not closed")
        }
        guard sawRoot else { throw SyntaxError(offset: i, reason: "no root element") }
    }

    /// Moves the innermost element's text buffer out (the discard buffer, emptied, when its text
    /// is not wanted), so that the parser, which mutates self, owns it alone. A run taken as it
    /// was is copied into it first: more text follows.
    private mutating func takeText() -> [UInt8] {
        guard stack[stack.count - 1].wantsText else {
            discarded.removeAll(keepingCapacity: true)
            return discarded
        }
        var text = stack[stack.count - 1].text
        stack[stack.count - 1].text = []
        if let run = stack[stack.count - 1].run {
            text.append(contentsOf: slice(run))
            stack[stack.count - 1].run = nil
        }
        return text
    }

    /// Character data up to the next `<` (or the end) that is the document's bytes as they are
    /// (no reference, no carriage return, no forbidden character): its range, with the cursor
    /// moved past it; nil, with the cursor where it was, for any other.
    private mutating func plainRun() -> Range<Int>? {
        var end = i
        while end < bytes.count {
            let c = bytes[end]
            if c == UInt8(ascii: "<") { break }
            if c == UInt8(ascii: "&") || (c < 0x20 && c != 0x09 && c != 0x0A) { return nil }
            end += 1
        }
        defer { i = end }
        return i..<end
    }

    private mutating func putText(_ text: [UInt8]) {
        if stack[stack.count - 1].wantsText { stack[stack.count - 1].text = text } else { discarded = text }
    }

    /// `<?xml version="1.0" encoding="…" standalone="…"?>`. Only UTF-8 documents are read; a
    /// declaration of `utf-16` is tolerated because the bytes have already been proven to be
    /// ASCII-compatible (a common .NET mislabel when XML is written through a `StringWriter`).
    private mutating func parseDeclaration() throws(SyntaxError) {
        let start = i
        i += 5
        try parseAttributes()
        guard startsWith("?>") else { throw SyntaxError(offset: i, reason: "malformed XML declaration") }
        i += 2
        if let encoding = attributes.first(where: { $0.name == "encoding" })?.value {
            let accepted = ["utf-8", "utf8", "us-ascii", "ascii", "utf-16"]
            if !accepted.contains(where: { encoding.asciiCaseInsensitiveEquals($0) }) {
                throw SyntaxError(offset: start, reason: "declared encoding \(encoding.prefix(32)) is not supported; send UTF-8", kind: .encoding)
            }
        }
    }

    // MARK: - Pieces

    /// "line L, column C" of a byte offset (columns count bytes).
    static func position(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        var line = 1
        var lineStart = 0
        let end = min(offset, bytes.count)
        for k in 0..<end where bytes[k] == 0x0A {
            line += 1
            lineStart = k + 1
        }
        return "line \(line), column \(end - lineStart + 1)"
    }

    /// Reads a tag's attributes into `attributes` (whose buffer is reused unless a handler kept it).
    private mutating func parseAttributes() throws(SyntaxError) {
        if !attributes.isEmpty { attributes.removeAll(keepingCapacity: true) }
        while true {
            let hadSpace = skipWhitespace()
            guard i < bytes.count else { throw SyntaxError(offset: i, reason: "unexpected end of document in a tag") }
            let b = bytes[i]
            if b == UInt8(ascii: ">") || b == UInt8(ascii: "/") || b == UInt8(ascii: "?") { return }
            guard hadSpace else { throw SyntaxError(offset: i, reason: "whitespace expected between attributes") }
            let nameOffset = i
            if attributes.count >= limits.maxAttributes {
                throw SyntaxError(offset: i, reason: "more than \(limits.maxAttributes) attributes on one element", kind: .depth)
            }
            // One allocation for the usual few attributes instead of one per growth.
            if attributes.capacity == 0 { attributes.reserveCapacity(4) }
            let nameRange = parseName()
            guard !nameRange.isEmpty else { throw SyntaxError(offset: i, reason: "invalid attribute name") }
            let name = string(in: nameRange)
            skipWhitespace()
            guard peek(UInt8(ascii: "=")) else { throw SyntaxError(offset: i, reason: "expected '=' after attribute \(name.prefix(64))") }
            i += 1
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                throw SyntaxError(offset: i, reason: "attribute value must be quoted")
            }
            let quote = bytes[i]
            i += 1
            // Fast path: a value without references, line ends or tabs is its bytes as they are.
            var end = i
            while end < bytes.count, bytes[end] != quote, bytes[end] >= 0x20, bytes[end] != UInt8(ascii: "&"), bytes[end] != UInt8(ascii: "<") {
                end += 1
            }
            if end < bytes.count, bytes[end] == quote {
                let value = String(decoding: UnsafeBufferPointer(rebasing: bytes[i..<end]), as: UTF8.self)
                i = end + 1
                if attributes.contains(where: { $0.name == name }) {
                    throw SyntaxError(offset: nameOffset, reason: "duplicate attribute \(name.prefix(64))")
                }
                attributes.append(.init(name: name, value: value))
                continue
            }
            var value: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[i..<end]))
            i = end
            while true {
                guard i < bytes.count else { throw SyntaxError(offset: nameOffset, reason: "unterminated attribute value") }
                let c = bytes[i]
                if c == quote { i += 1; break }
                switch c {
                case UInt8(ascii: "<"):
                    throw SyntaxError(offset: i, reason: "'<' is not allowed in an attribute value")
                case UInt8(ascii: "&"):
                    try parseReference(into: &value)
                case 0x0D:
                    value.append(0x20)
                    i += 1
                    if peek(0x0A) { i += 1 }
                case 0x09, 0x0A:
                    value.append(0x20)
                    i += 1
                case 0..<0x20:
                    throw SyntaxError(offset: i, reason: "control character not allowed in XML")
                default:
                    value.append(c)
                    i += 1
                }
            }
            if attributes.contains(where: { $0.name == name }) {
                throw SyntaxError(offset: nameOffset, reason: "duplicate attribute \(name.prefix(64))")
            }
            attributes.append(.init(name: name, value: String(decoding: value, as: UTF8.self)))
        }
    }

    /// Text up to the next `<`, with references resolved and line ends normalised.
    private mutating func parseCharacterData(into text: inout [UInt8]) throws(SyntaxError) {
        var runStart = i
        while i < bytes.count {
            let c = bytes[i]
            switch c {
            case UInt8(ascii: "<"):
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                return
            case UInt8(ascii: "&"):
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                try parseReference(into: &text)
                runStart = i
            case 0x0D:
                text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                text.append(0x0A)
                i += 1
                if peek(0x0A) { i += 1 }
                runStart = i
            case 0x09, 0x0A:
                i += 1
            case 0..<0x20:
                throw SyntaxError(offset: i, reason: "control character not allowed in XML")
            default:
                i += 1
            }
        }
        text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
    }

    /// `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` `&#N;` `&#xH;`. Any other entity is refused: without
    /// a DTD none can be defined, and refusing them is what keeps entity bombs out.
    private mutating func parseReference(into out: inout [UInt8]) throws(SyntaxError) {
        let start = i
        i += 1
        var end = i
        while end < bytes.count, bytes[end] != UInt8(ascii: ";"), end - i < 12 { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";") else {
            throw SyntaxError(offset: start, reason: "'&' must start an entity or character reference ending with ';'")
        }
        let body = UnsafeBufferPointer(rebasing: bytes[i..<end])
        i = end + 1
        if body.first == UInt8(ascii: "#") {
            var value: UInt32 = 0
            var digits = body.dropFirst()
            var radix: UInt32 = 10
            if digits.first == UInt8(ascii: "x") {
                radix = 16
                digits = digits.dropFirst()
            }
            guard !digits.isEmpty else { throw SyntaxError(offset: start, reason: "empty character reference") }
            for d in digits {
                let v: UInt32
                switch d {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(d - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: v = UInt32(d - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: v = UInt32(d - UInt8(ascii: "A") + 10)
                default: throw SyntaxError(offset: start, reason: "invalid character reference")
                }
                value = value * radix + v
                if value > 0x10FFFF { throw SyntaxError(offset: start, reason: "character reference out of range") }
            }
            let legal =
                value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
                || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
            guard legal else { throw SyntaxError(offset: start, reason: "character reference to a character not allowed in XML") }
            appendUTF8(value, to: &out)
            return
        }
        switch String(decoding: body, as: UTF8.self) {
        case "lt": out.append(UInt8(ascii: "<"))
        case "gt": out.append(UInt8(ascii: ">"))
        case "amp": out.append(UInt8(ascii: "&"))
        case "quot": out.append(UInt8(ascii: "\""))
        case "apos": out.append(UInt8(ascii: "'"))
        default:
            throw SyntaxError(offset: start, reason: "undefined entity reference (only the five predefined entities are allowed)", kind: .forbidden)
        }
    }

    /// Appends raw bytes (CDATA) after checking for characters XML forbids.
    private func appendChecked(_ range: Range<Int>, to text: inout [UInt8]) throws(SyntaxError) {
        var k = range.lowerBound
        while k < range.upperBound {
            let c = bytes[k]
            if c == 0x0D {
                text.append(0x0A)
                if k + 1 < range.upperBound, bytes[k + 1] == 0x0A { k += 1 }
            } else if c < 0x20 && c != 0x09 && c != 0x0A {
                throw SyntaxError(offset: k, reason: "control character not allowed in XML")
            } else {
                text.append(c)
            }
            k += 1
        }
    }

    /// The range of the name at the cursor; empty when there is no valid name there.
    private mutating func parseName() -> Range<Int> {
        let start = i
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "/"), UInt8(ascii: ">"), UInt8(ascii: "="),
                UInt8(ascii: "<"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "?"), UInt8(ascii: "!"),
                UInt8(ascii: "&"), UInt8(ascii: ";"):
                return finishName(start)
            case 0..<0x20:
                return finishName(start)
            default:
                i += 1
            }
        }
        return finishName(start)
    }

    private mutating func finishName(_ start: Int) -> Range<Int> {
        guard i > start else { return start..<start }
        let first = bytes[start]
        if first == UInt8(ascii: "-") || first == UInt8(ascii: ".") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) {
            i = start
            return start..<start
        }
        return start..<i
    }

    private func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[range]) }
    private func string(in range: Range<Int>) -> String { String(decoding: slice(range), as: UTF8.self) }

    private mutating func find(_ terminator: StaticString, what: String) throws(SyntaxError) -> Int {
        let t = UnsafeBufferPointer(start: terminator.utf8Start, count: terminator.utf8CodeUnitCount)
        var k = i
        while k + t.count <= bytes.count {
            if bytes[k] == t[0] {
                var match = true
                for j in 1..<t.count where bytes[k + j] != t[j] {
                    match = false
                    break
                }
                if match { return k }
            }
            k += 1
        }
        throw SyntaxError(offset: i, reason: "unterminated \(what)")
    }

    private mutating func skipPast(_ terminator: StaticString, what: String) throws(SyntaxError) {
        let end = try find(terminator, what: what)
        i = end + terminator.utf8CodeUnitCount
    }

    private func startsWith(_ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        guard i + n <= bytes.count else { return false }
        let p = s.utf8Start
        for k in 0..<n where bytes[i + k] != p[k] { return false }
        return true
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = i
        while i < bytes.count, isWhitespace(bytes[i]) { i += 1 }
        return i > start
    }

    private func peek(_ b: UInt8) -> Bool { i < bytes.count && bytes[i] == b }
    private func isWhitespace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
}
