import HTTPTypes

extension HTTPFields {
    /// Test shorthand: fields from name/value pairs (names must be HTTP tokens).
    init(_ pairs: KeyValuePairs<String, String>) {
        self.init()
        for (name, value) in pairs { append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
    }

    /// Test shorthand: the first value of `name`.
    subscript(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { self[$0] }
    }

    /// Test shorthand: every value of `name`, in order.
    func values(for name: String) -> [String] {
        HTTPField.Name(name).map { self[values: $0] } ?? []
    }
}
