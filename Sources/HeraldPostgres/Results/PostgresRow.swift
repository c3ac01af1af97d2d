/// One row of a ``PostgresQueryResult``; decodes fields by column name or index.
///
/// Every decode throws ``PostgresError`` with code ``PostgresError/Code/decodingFailed`` and
/// ``PostgresError/column`` set when the column is unknown, its type does not fit the
/// requested Swift type, or it is NULL and the type is not optional.
public struct PostgresRow: Sendable {
    let storage: PostgresQueryResult.Storage
    let row: Int

    public var columns: [PostgresColumn] { storage.layout.columns }

    /// Decodes the first column named `column`.
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, column: String) throws(PostgresError) -> T {
        guard let index = storage.layout.position(of: column) else {
            var error = PostgresError(code: .decodingFailed, message: "no column named \"\(column)\" in the result")
            error.column = column
            throw error
        }
        return try decode(type, at: index)
    }

    /// Decodes the column at `index` (0-based).
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, at index: Int) throws(PostgresError) -> T {
        let cell = try self.cell(at: index)
        return cell.isNull ? try T.decodeNull(from: cell) : try T.decode(from: cell)
    }

    /// An `Int` field, read in place: the claim statement's answer is integers, and a
    /// ``PostgresCell`` for each field (its slice of the bytes, its column's name) cost a few
    /// retains apiece. Anything else (NULL, another type, not a number) goes the general way,
    /// which throws its error.
    public func decode(_ type: Int.Type = Int.self, at index: Int) throws(PostgresError) -> Int {
        if let (field, column) = field(at: index), field.length >= 0, PostgresDataType.integers.contains(column.dataType),
            let value = storage.bytes.withUnsafeBufferPointer({
                PostgresTextCodec.parseInteger(UnsafeBufferPointer(rebasing: $0[field.start..<field.start + Int(field.length)]))
            }),
            let value = Int(exactly: value)
        {
            return value
        }
        let cell = try self.cell(at: index)
        return cell.isNull ? try Int.decodeNull(from: cell) : try Int.decode(from: cell)
    }

    /// Whether the field at `index` is SQL NULL.
    public func isNull(at index: Int) throws(PostgresError) -> Bool { try cell(at: index).isNull }

    /// Whether the field named `column` is SQL NULL.
    public func isNull(column: String) throws(PostgresError) -> Bool {
        try decode(Optional<RawText>.self, column: column) == nil
    }

    /// The raw field at `index`, for custom decoding.
    public func cell(at index: Int) throws(PostgresError) -> PostgresCell {
        guard let (field, column) = field(at: index) else {
            var error = PostgresError(code: .decodingFailed, message: "column index \(index) out of range 0..<\(columns.count)")
            error.column = "#\(index)"
            throw error
        }
        let end = field.start + max(0, Int(field.length))
        let bytes = storage.bytes[field.start..<end]
        return PostgresCell(bytes: bytes, isNull: field.length < 0, dataType: column.dataType, columnName: column.name, columnIndex: index)
    }

    /// Where the field at `index` is in the result's bytes, and its column; nil out of range.
    private func field(at index: Int) -> (PostgresQueryResult.FieldSpan, PostgresColumn)? {
        let columns = storage.layout.columns
        guard index >= 0, index < columns.count else { return nil }
        return (storage.fields[row * columns.count + index], columns[index])
    }

    /// Accepts any column type; used by ``isNull(column:)``.
    private struct RawText: PostgresDecodable {
        static func decode(from cell: PostgresCell) throws(PostgresError) -> RawText { RawText() }
    }
}
