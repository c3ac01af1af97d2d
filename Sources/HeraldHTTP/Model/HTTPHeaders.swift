/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Order and duplicates are kept as given (requests) or as received (responses). HTTP/2
/// delivers names in lowercase; lookups ignore case so callers need not care. Values are text:
/// response bytes that are not valid UTF-8 are decoded with replacement characters.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field]

    public init() {
        fields = []
    }

    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    /// The first value of `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        fields.first { Self.equal($0.name, name) }?.value
    }

    /// Every value of `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.equal($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        fields.contains { Self.equal($0.name, name) }
    }

    /// Appends a field, keeping any existing fields of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    public mutating func remove(name: String) {
        fields.removeAll { Self.equal($0.name, name) }
    }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.lowercased() == b.lowercased()
    }
}

extension HTTPHeaders {
    init(fields: [Field]) {
        self.fields = fields
    }
}
