import Foundation

/// An element type whose Swift array maps to one PostgreSQL type.
///
/// Why: Swift allows one conformance of `Array` to ``PostgresBindable``, yet `[UInt8]` must be
/// bytea while `[String]` is text[]. Each element type decides what its array means.
/// Built in: `UInt8` (bytea), `String` and `String?` (text[]), `Int` (int8[]), `UUID` (uuid[]).
public protocol PostgresArrayElement: Sendable {
    static var postgresArrayDataType: PostgresDataType { get }
    static func postgresArrayValue(_ elements: [Self]) -> PostgresValue
    static func decodePostgresArray(from cell: PostgresCell) throws(PostgresError) -> [Self]
}

extension UInt8: PostgresArrayElement {
    public static var postgresArrayDataType: PostgresDataType { .bytea }

    public static func postgresArrayValue(_ elements: [UInt8]) -> PostgresValue {
        PostgresValue(dataType: .bytea, format: .binary, bytes: elements)
    }

    public static func decodePostgresArray(from cell: PostgresCell) throws(PostgresError) -> [UInt8] {
        try cell.expect([.bytea])
        return try PostgresTextCodec.parseByteaHex(cell.bytes, cell: cell)
    }
}

extension String: PostgresArrayElement {
    public static var postgresArrayDataType: PostgresDataType { .textArray }

    public static func postgresArrayValue(_ elements: [String]) -> PostgresValue {
        PostgresBinaryCodec.array(
            elements, elementType: .text, arrayType: .textArray, byteCount: { $0.pointee.utf8.count },
            append: { PostgresBinaryCodec.appendUTF8(&$0, $1.pointee) })
    }

    public static func decodePostgresArray(from cell: PostgresCell) throws(PostgresError) -> [String] {
        var result: [String] = []
        for element in try Optional<String>.decodePostgresArray(from: cell) {
            guard let element else { throw cell.decodingError("the array holds a NULL; decode [String?] instead") }
            result.append(element)
        }
        return result
    }
}

extension Optional: PostgresArrayElement where Wrapped == String {
    public static var postgresArrayDataType: PostgresDataType { .textArray }

    public static func postgresArrayValue(_ elements: [String?]) -> PostgresValue {
        PostgresBinaryCodec.array(
            elements, elementType: .text, arrayType: .textArray, byteCount: { $0.pointee?.utf8.count },
            append: { PostgresBinaryCodec.appendUTF8(&$0, $1.pointee!) })
    }

    public static func decodePostgresArray(from cell: PostgresCell) throws(PostgresError) -> [String?] {
        try cell.expectTextArray()
        return try PostgresTextCodec.parseArray(cell.bytes, cell: cell)
    }
}

extension Int: PostgresArrayElement {
    public static var postgresArrayDataType: PostgresDataType { .int8Array }

    public static func postgresArrayValue(_ elements: [Int]) -> PostgresValue {
        PostgresBinaryCodec.array(
            elements, elementType: .int8, arrayType: .int8Array, byteCount: { _ in 8 }, append: { PostgresBinaryCodec.appendInt64(&$0, Int64($1.pointee)) })
    }

    public static func decodePostgresArray(from cell: PostgresCell) throws(PostgresError) -> [Int] {
        try cell.expect([.int2Array, .int4Array, .int8Array])
        var result: [Int] = []
        for element in try PostgresTextCodec.parseArray(cell.bytes, cell: cell) {
            guard let element else { throw cell.decodingError("the array holds a NULL") }
            guard let value = Int(element) else { throw cell.decodingError("array element is not an integer") }
            result.append(value)
        }
        return result
    }
}

extension UUID: PostgresArrayElement {
    public static var postgresArrayDataType: PostgresDataType { .uuidArray }

    public static func postgresArrayValue(_ elements: [UUID]) -> PostgresValue {
        PostgresBinaryCodec.array(
            elements, elementType: .uuid, arrayType: .uuidArray, byteCount: { _ in 16 },
            append: { out, uuid in
                withUnsafeBytes(of: uuid.pointee.uuid) { out.append(contentsOf: $0) }
            })
    }

    public static func decodePostgresArray(from cell: PostgresCell) throws(PostgresError) -> [UUID] {
        try cell.expect([.uuidArray])
        var result: [UUID] = []
        for element in try PostgresTextCodec.parseArray(cell.bytes, cell: cell) {
            guard let element, let value = UUID(uuidString: element) else { throw cell.decodingError("array element is not a UUID") }
            result.append(value)
        }
        return result
    }
}
