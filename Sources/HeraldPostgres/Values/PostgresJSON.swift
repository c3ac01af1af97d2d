import Foundation

/// JSON text bound as `jsonb` (assignable to `json` columns too) and decoded from `json` or
/// `jsonb` columns.
///
/// Why a wrapper rather than `String`: a `String` parameter is typed `text`, which PostgreSQL
/// will not put into a json column without a cast. The text is not validated here; the server
/// rejects malformed JSON with SQLSTATE 22P02.
public struct PostgresJSON: Sendable, Hashable, PostgresBindable, PostgresDecodable {
    public var text: String

    public init(_ text: String) { self.text = text }

    /// Encodes `value` with `JSONEncoder`.
    public init<T: Encodable>(encoding value: T, encoder: JSONEncoder = JSONEncoder()) throws {
        self.text = String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Decodes the JSON text with `JSONDecoder`.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }

    public var postgresValue: PostgresValue { PostgresValue(text: text, dataType: .jsonb) }
    public static var postgresDataType: PostgresDataType { .jsonb }

    public static func decode(from cell: PostgresCell) throws(PostgresError) -> PostgresJSON {
        try cell.expect([.json, .jsonb])
        return PostgresJSON(cell.text)
    }
}
