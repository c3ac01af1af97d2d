/// Reads string resources from a .NET `.resx` document, the format seed 000 keeps its texts in:
/// `<data name="balance" xml:space="preserve"><value>Баланс пользователя {0}: {1}</value></data>`.
///
/// `resheader`, `assembly`, `metadata` and the inline `xsd:schema` are skipped; a `data` element
/// without `name` or `<value>`, a duplicate name, or a non-string resource (`type` or
/// `mimetype` attribute) is an ``TemplateError/Code/invalidResource``. Values are kept exactly
/// (whitespace included; `xml:space="preserve"` is what .NET writes). The document goes through
/// the same hardened XML reader as events: no DTD, bounded depth.
public enum ResxReader {
    /// One string resource.
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var value: String
        public var comment: String?

        public init(name: String, value: String, comment: String? = nil) {
            self.name = name
            self.value = value
            self.comment = comment
        }
    }

    /// The string resources of `bytes`, in document order. `source` (a file name) is used in
    /// errors only.
    public static func entries(_ bytes: [UInt8], source: String) throws(TemplateError) -> [Entry] {
        if let bad = UTF8Validator.firstInvalidOffset(bytes) {
            throw TemplateError(code: .invalidResource, source: source, reason: "invalid UTF-8 at byte \(bad)")
        }
        let root: XElement
        do {
            root = try XMLReader.parse(bytes, limits: .init(maxDepth: 64))
        } catch {
            throw TemplateError(code: .invalidResource, source: source, reason: "\(error.reason) (\(XMLEventReader.position(of: error.offset, in: bytes)))")
        }
        guard root.name == "root" else {
            throw TemplateError(code: .invalidResource, source: source, reason: "root element must be <root>")
        }
        var entries: [Entry] = []
        var names: Set<String> = []
        var index = 0
        for data in root.children where data.name == "data" {
            index += 1
            guard let name = data.attribute("name"), !name.isEmpty else {
                throw TemplateError(code: .invalidResource, source: source, reason: "data element \(index) has no name")
            }
            if data.attribute("type") != nil || data.attribute("mimetype") != nil {
                throw TemplateError(code: .invalidResource, source: "\(source): \(name)", reason: "only string resources are supported")
            }
            let values = data.children.filter { $0.name == "value" }
            guard values.count == 1 else {
                throw TemplateError(code: .invalidResource, source: "\(source): \(name)", reason: values.isEmpty ? "no <value>" : "more than one <value>")
            }
            guard names.insert(name).inserted else {
                throw TemplateError(code: .invalidResource, source: "\(source): \(name)", reason: "duplicate resource name")
            }
            let comment = data.children.first { $0.name == "comment" }?.text
            entries.append(Entry(name: name, value: values[0].text, comment: comment))
        }
        return entries
    }
}
