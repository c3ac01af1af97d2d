/// One statement parameter, already encoded the way libpq sends it.
///
/// Why: values travel from the caller's task to the connection's thread, so they are plain
/// `Sendable` bytes, encoded on the caller's side. Parameters are always sent separately
/// from the SQL text (`PQexecPrepared`), never spliced into it.
///
/// Text-format values are sent NUL-terminated, so a text value containing a NUL byte is
/// refused with ``PostgresError/Code/invalidParameter`` when the statement runs instead of
/// being silently cut short (PostgreSQL text cannot hold NUL anyway).
public struct PostgresValue: Sendable, Hashable, CustomStringConvertible {
    /// The wire format of ``bytes``.
    public enum Format: Int32, Sendable, Hashable {
        case text = 0
        case binary = 1
    }

    /// The type the statement is prepared with; ``PostgresDataType/unspecified`` lets the
    /// server infer it.
    public var dataType: PostgresDataType
    public var format: Format
    /// `nil` is SQL NULL.
    public var bytes: [UInt8]?

    public init(dataType: PostgresDataType, format: Format, bytes: [UInt8]?) {
        self.dataType = dataType
        self.format = format
        self.bytes = bytes
    }

    /// A text-format value of the given type (default: let the server infer it).
    public init(text: String, dataType: PostgresDataType = .unspecified) {
        self.init(dataType: dataType, format: .text, bytes: Array(text.utf8))
    }

    /// SQL NULL of an unspecified type.
    public static let null = PostgresValue(dataType: .unspecified, format: .text, bytes: nil)

    /// SQL NULL typed as `dataType` (useful where the server cannot infer a type).
    public static func null(_ dataType: PostgresDataType) -> PostgresValue {
        PostgresValue(dataType: dataType, format: .text, bytes: nil)
    }

    public var isNull: Bool { bytes == nil }

    /// Never shows the value itself: parameters stay out of logs.
    public var description: String {
        guard let bytes else { return "NULL::\(dataType)" }
        return "<\(bytes.count) bytes \(format == .text ? "text" : "binary")>::\(dataType)"
    }
}
