import Foundation

/// A Swift type a result column can be decoded into (see ``PostgresRow/decode(_:column:)``).
///
/// Decoding checks the column's PostgreSQL type: asking for an `Int` from a text column, or a
/// `String` from an integer column, throws ``PostgresError/Code/decodingFailed`` naming the
/// column, as does a NULL decoded into a non-optional type. Decode `T?` to accept NULL.
///
/// Built in: `String` (text, varchar, char, name, json, jsonb, xml, uuid and user-defined
/// types such as enums), `Int`/`Int64` (int2, int4, int8, oid), `Int32`, `Int16`, `Bool`,
/// `Double` (float4, float8, numeric, integers), `Float`, `Date` (timestamptz, timestamp as
/// UTC, date), `UUID`, `Data` and `[UInt8]` (bytea), `[String]`/`[String?]` (text-like arrays),
/// `[Int]`, ``PostgresJSON`` (json, jsonb), and `Optional` of each.
public protocol PostgresDecodable: Sendable {
    /// Decodes a non-NULL field.
    static func decode(from cell: PostgresCell) throws(PostgresError) -> Self
    /// Decodes a NULL field; the default throws ``PostgresError/Code/decodingFailed``.
    static func decodeNull(from cell: PostgresCell) throws(PostgresError) -> Self
}

extension PostgresDecodable {
    public static func decodeNull(from cell: PostgresCell) throws(PostgresError) -> Self {
        throw cell.decodingError("unexpected NULL; decode \(Self.self)? to accept NULL")
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Wrapped? {
        try Wrapped.decode(from: cell)
    }

    public static func decodeNull(from cell: PostgresCell) throws(PostgresError) -> Wrapped? { nil }
}

extension String: PostgresDecodable {
    static let textLikeTypes: [PostgresDataType] = [
        .text, .varchar, .bpchar, .name, .char, .unknown, .json, .jsonb, .xml, .uuid,
    ]

    public static func decode(from cell: PostgresCell) throws(PostgresError) -> String {
        try cell.expect(textLikeTypes, allowUserTypes: true)
        return cell.text
    }
}

extension PostgresDataType {
    /// The types an integer decodes from.
    static let integers: [PostgresDataType] = [.int2, .int4, .int8, .oid]
}

private func decodeInteger<T: FixedWidthInteger>(_: T.Type, from cell: PostgresCell) throws(PostgresError) -> T {
    try cell.expect(PostgresDataType.integers)
    guard let wide = PostgresTextCodec.parseInteger(cell.bytes) else { throw cell.decodingError("not an integer") }
    guard let value = T(exactly: wide) else { throw cell.decodingError("value out of range for \(T.self)") }
    return value
}

extension Int: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Int { try decodeInteger(Int.self, from: cell) }
}

extension Int64: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Int64 { try decodeInteger(Int64.self, from: cell) }
}

extension Int32: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Int32 { try decodeInteger(Int32.self, from: cell) }
}

extension Int16: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Int16 { try decodeInteger(Int16.self, from: cell) }
}

extension Bool: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Bool {
        try cell.expect([.bool])
        switch cell.bytes.first {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: throw cell.decodingError("not a boolean")
        }
    }
}

extension Double: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Double {
        try cell.expect([.float4, .float8, .numeric, .int2, .int4, .int8])
        guard let value = Double(cell.text) else { throw cell.decodingError("not a number") }
        return value
    }
}

extension Float: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Float {
        try cell.expect([.float4, .float8, .numeric, .int2, .int4, .int8])
        guard let value = Float(cell.text) else { throw cell.decodingError("not a number") }
        return value
    }
}

extension Date: PostgresDecodable {
    /// `infinity` and `-infinity` decode to `Date.distantFuture` and `Date.distantPast`.
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Date {
        try cell.expect([.timestamptz, .timestamp, .date])
        return try PostgresTextCodec.parseTimestamp(cell.bytes, cell: cell)
    }
}

extension UUID: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> UUID {
        try cell.expect([.uuid])
        guard let value = UUID(uuidString: cell.text) else { throw cell.decodingError("not a UUID") }
        return value
    }
}

extension Data: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> Data {
        Data(try UInt8.decodePostgresArray(from: cell))
    }
}

extension Array: PostgresDecodable where Element: PostgresArrayElement {
    public static func decode(from cell: PostgresCell) throws(PostgresError) -> [Element] {
        try Element.decodePostgresArray(from: cell)
    }
}
