/// One element of a parsed XML document: its name (prefix included, as written), attributes in
/// document order, child elements, and the concatenation of its own character data (text and
/// CDATA, entities resolved, line ends normalised). Mixed-content positions are not kept: the
/// formats Herald reads (seed 000's `PushNotification` and `.resx`) do not need them.
struct XElement: Sendable, Hashable {
    struct Attribute: Sendable, Hashable {
        var name: String
        var value: String
    }

    var name: String
    var attributes: [Attribute]
    var children: [XElement]
    var text: String
    /// Byte offset of the element's `<` in the document.
    var offset: Int

    /// The value of the first attribute whose name equals `name`, compared ASCII
    /// case-insensitively.
    func attribute(_ name: String) -> String? { attributes.value(named: name) }
}

extension [XElement.Attribute] {
    /// The value of the first attribute whose name equals `name`, compared ASCII
    /// case-insensitively (an exact match first). The attributes are compared in place (a
    /// walk over the array would copy each one out): this runs for every filter and parameter
    /// of every event.
    func value(named name: String) -> String? {
        withUnsafeBufferPointer { attributes in
            if let index = attributes.indices.first(where: { attributes[$0].name == name }) { return attributes[index].value }
            return attributes.indices.first { attributes[$0].name.asciiCaseInsensitiveEquals(name) }.map { attributes[$0].value }
        }
    }
}
