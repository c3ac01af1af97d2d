/// A PostgreSQL type, by its OID (`pg_type.oid`). Extensible: any OID can be wrapped.
///
/// Used to type parameters when a statement is prepared and to check result columns when
/// decoding. Types created by extensions or `CREATE TYPE` (enums, citext, …) have OIDs of
/// ``firstUserOID`` and above, different in every database.
public struct PostgresDataType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    /// OID 0: let the server infer the parameter's type from the statement.
    public static let unspecified = PostgresDataType(0)
    public static let bool = PostgresDataType(16)
    public static let bytea = PostgresDataType(17)
    public static let char = PostgresDataType(18)
    public static let name = PostgresDataType(19)
    public static let int8 = PostgresDataType(20)
    public static let int2 = PostgresDataType(21)
    public static let int4 = PostgresDataType(23)
    public static let text = PostgresDataType(25)
    public static let oid = PostgresDataType(26)
    public static let json = PostgresDataType(114)
    public static let xml = PostgresDataType(142)
    public static let float4 = PostgresDataType(700)
    public static let float8 = PostgresDataType(701)
    public static let unknown = PostgresDataType(705)
    public static let bpchar = PostgresDataType(1042)
    public static let varchar = PostgresDataType(1043)
    public static let date = PostgresDataType(1082)
    public static let timestamp = PostgresDataType(1114)
    public static let timestamptz = PostgresDataType(1184)
    public static let numeric = PostgresDataType(1700)
    public static let uuid = PostgresDataType(2950)
    public static let jsonb = PostgresDataType(3802)
    public static let nameArray = PostgresDataType(1003)
    public static let int2Array = PostgresDataType(1005)
    public static let int4Array = PostgresDataType(1007)
    public static let textArray = PostgresDataType(1009)
    public static let bpcharArray = PostgresDataType(1014)
    public static let varcharArray = PostgresDataType(1015)
    public static let int8Array = PostgresDataType(1016)
    public static let uuidArray = PostgresDataType(2951)
    public static let byteaArray = PostgresDataType(1001)

    /// The first OID PostgreSQL assigns to objects created after `initdb`.
    public static let firstUserOID: UInt32 = 16384

    public var description: String {
        switch self {
        case .bool: "bool"
        case .bytea: "bytea"
        case .char: "char"
        case .name: "name"
        case .int8: "int8"
        case .int2: "int2"
        case .int4: "int4"
        case .text: "text"
        case .oid: "oid"
        case .json: "json"
        case .xml: "xml"
        case .float4: "float4"
        case .float8: "float8"
        case .unknown: "unknown"
        case .bpchar: "bpchar"
        case .varchar: "varchar"
        case .date: "date"
        case .timestamp: "timestamp"
        case .timestamptz: "timestamptz"
        case .numeric: "numeric"
        case .uuid: "uuid"
        case .jsonb: "jsonb"
        case .nameArray: "name[]"
        case .int2Array: "int2[]"
        case .int4Array: "int4[]"
        case .textArray: "text[]"
        case .bpcharArray: "bpchar[]"
        case .varcharArray: "varchar[]"
        case .int8Array: "int8[]"
        case .uuidArray: "uuid[]"
        case .byteaArray: "bytea[]"
        default: "oid \(rawValue)"
        }
    }
}
