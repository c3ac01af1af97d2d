/// One field of a result row, in PostgreSQL's text format, handed to a ``PostgresDecodable``.
///
/// Why public: custom types conform to ``PostgresDecodable`` by reading ``bytes`` and
/// throwing ``decodingError(_:)``, which names the column.
public struct PostgresCell: Sendable {
    /// The field's text-format bytes; empty for NULL (check ``isNull``).
    public let bytes: ArraySlice<UInt8>
    public let isNull: Bool
    public let dataType: PostgresDataType
    public let columnName: String
    public let columnIndex: Int

    /// The field as a string (UTF-8, as the connection's client encoding guarantees).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// A ``PostgresError/Code/decodingFailed`` error naming this column. The message must
    /// not quote the value.
    public func decodingError(_ message: String) -> PostgresError {
        var error = PostgresError(code: .decodingFailed, message: "column \(columnIndex) \"\(columnName)\" (\(dataType)): \(message)")
        error.column = columnName
        return error
    }

    /// Throws unless the column's type is one of `types`. A list, not a set: it is checked for
    /// every field decoded, and a scan of a few numbers costs less than hashing (or, for a set
    /// literal, building a set) each time.
    public func expect(_ types: [PostgresDataType], allowUserTypes: Bool = false) throws(PostgresError) {
        if types.contains(dataType) { return }
        if allowUserTypes, dataType.rawValue >= PostgresDataType.firstUserOID { return }
        let names = types.map(\.description).sorted().joined(separator: ", ")
        throw decodingError("type mismatch: expected one of \(names)")
    }

    func expectTextArray() throws(PostgresError) {
        try expect(Self.textArrayTypes, allowUserTypes: true)
    }

    private static let textArrayTypes: [PostgresDataType] = [.textArray, .varcharArray, .bpcharArray, .nameArray]
}
