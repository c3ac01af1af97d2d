import Foundation

/// A Swift value that can be sent as a statement parameter (`$1`, `$2`, …).
///
/// Why a protocol: HeraldStore's own types (platforms, ids) conform by mapping to one of the
/// built-in ones. ``postgresDataType`` is what the statement is prepared with, also for
/// `nil` (so `Int?` binds as a typed NULL and shares the prepared statement of `Int`).
///
/// Built in: `String` (text), `Int`/`Int64` (int8), `Int32` (int4), `Int16` (int2), `Bool`,
/// `Double` (float8), `Float` (float4), `Date` (timestamptz, microseconds), `UUID`, `Data`
/// and `[UInt8]` (bytea), `[String]`/`[String?]` (text[]), `[Int]` (int8[]), `[UUID]` (uuid[]), ``PostgresJSON``
/// (jsonb), `Optional` of any of these (NULL), and ``PostgresValue`` itself.
public protocol PostgresBindable: Sendable {
    /// The encoded parameter.
    var postgresValue: PostgresValue { get }
    /// The type the statement is prepared with for this Swift type.
    static var postgresDataType: PostgresDataType { get }
}

extension PostgresValue: PostgresBindable {
    public var postgresValue: PostgresValue { self }
    public static var postgresDataType: PostgresDataType { .unspecified }
}

extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    public var postgresValue: PostgresValue {
        switch self {
        case .some(let value): value.postgresValue
        case .none: .null(Wrapped.postgresDataType)
        }
    }

    public static var postgresDataType: PostgresDataType { Wrapped.postgresDataType }
}

extension String: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(text: self, dataType: .text) }
    public static var postgresDataType: PostgresDataType { .text }
}

extension Int: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(text: String(self), dataType: .int8) }
    public static var postgresDataType: PostgresDataType { .int8 }
}

extension Int64: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(text: String(self), dataType: .int8) }
    public static var postgresDataType: PostgresDataType { .int8 }
}

extension Int32: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(text: String(self), dataType: .int4) }
    public static var postgresDataType: PostgresDataType { .int4 }
}

extension Int16: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(text: String(self), dataType: .int2) }
    public static var postgresDataType: PostgresDataType { .int2 }
}

extension Bool: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(text: self ? "t" : "f", dataType: .bool) }
    public static var postgresDataType: PostgresDataType { .bool }
}

extension Double: PostgresBindable {
    public var postgresValue: PostgresValue {
        PostgresValue(text: PostgresTextCodec.formatFloat(self), dataType: .float8)
    }
    public static var postgresDataType: PostgresDataType { .float8 }
}

extension Float: PostgresBindable {
    public var postgresValue: PostgresValue {
        PostgresValue(text: PostgresTextCodec.formatFloat(self), dataType: .float4)
    }
    public static var postgresDataType: PostgresDataType { .float4 }
}

extension Date: PostgresBindable {
    /// Sent in binary: microseconds since 2000-01-01 UTC, rounded to the nearest microsecond
    /// (PostgreSQL's resolution).
    public var postgresValue: PostgresValue {
        PostgresValue(dataType: .timestamptz, format: .binary, bytes: PostgresBinaryCodec.timestamp(self))
    }
    public static var postgresDataType: PostgresDataType { .timestamptz }
}

extension UUID: PostgresBindable {
    public var postgresValue: PostgresValue {
        let u = uuid
        let bytes = [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
        return PostgresValue(dataType: .uuid, format: .binary, bytes: bytes)
    }
    public static var postgresDataType: PostgresDataType { .uuid }
}

extension Data: PostgresBindable {
    public var postgresValue: PostgresValue { PostgresValue(dataType: .bytea, format: .binary, bytes: Array(self)) }
    public static var postgresDataType: PostgresDataType { .bytea }
}

extension Array: PostgresBindable where Element: PostgresArrayElement {
    public var postgresValue: PostgresValue { Element.postgresArrayValue(self) }
    public static var postgresDataType: PostgresDataType { Element.postgresArrayDataType }
}
