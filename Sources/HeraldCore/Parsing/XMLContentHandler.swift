/// Receives a document's elements from ``XMLReader`` in document order: each start, then (after
/// its descendants) its end. Lets a reader keep only what it needs of a document.
protocol XMLContentHandler {
    /// An element starts (a self-closing one ends at once after). `name` is its name as written,
    /// valid only during the call; `depth` is 0 for the root. Returns whether the element's own
    /// character data (text and CDATA, not its children's) is wanted at its end.
    mutating func startElement(name: UnsafeBufferPointer<UInt8>, attributes: [XElement.Attribute], offset: Int, depth: Int) -> Bool

    /// The innermost open element ends: `text` is its character data (references resolved, line
    /// ends normalised) when it was wanted, else empty; valid only during the call.
    mutating func endElement(text: UnsafeBufferPointer<UInt8>, depth: Int)
}

/// Builds the ``XElement`` tree of a document (``XMLReader/parse(_:limits:)``).
struct XMLTreeBuilder: XMLContentHandler {
    private struct Open {
        var name: String
        var attributes: [XElement.Attribute]
        var offset: Int
        var children: [XElement] = []
    }

    private var open: [Open] = []
    private(set) var root: XElement?

    mutating func startElement(name: UnsafeBufferPointer<UInt8>, attributes: [XElement.Attribute], offset: Int, depth: Int) -> Bool {
        open.append(Open(name: String(decoding: name, as: UTF8.self), attributes: attributes, offset: offset))
        return true
    }

    mutating func endElement(text: UnsafeBufferPointer<UInt8>, depth: Int) {
        let element = open.removeLast()
        let closed = XElement(
            name: element.name, attributes: element.attributes, children: element.children, text: String(decoding: text, as: UTF8.self),
            offset: element.offset)
        if open.isEmpty { root = closed } else { open[open.count - 1].children.append(closed) }
    }
}
