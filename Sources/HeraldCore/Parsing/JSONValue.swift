/// A JSON document as a value: what the event decoder reads and what the payload builders write.
///
/// HeraldCore carries its own JSON reader and writer instead of `JSONSerialization` because it
/// needs things Foundation does not promise on every platform: byte-exact canonical output (keys
/// sorted by their UTF-8 bytes, no insignificant whitespace) for golden tests and payload size
/// limits, numbers kept as their literal text, duplicate keys detected, and hard depth and size
/// limits on hostile input with a typed error that says where and why.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number's literal text as it appeared (or as written by ``int(_:)``), so that no
    /// precision is lost between reading and writing.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// A number from an integer.
    public static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    /// The member `key` of an object, or `nil` for a missing key or a value that is no object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string of a `.string`, otherwise `nil`.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// A short name of the value's kind for error messages ("string", "object", …).
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
