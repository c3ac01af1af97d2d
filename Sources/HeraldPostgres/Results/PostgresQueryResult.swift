/// The rows and the affected-row count of one statement, copied out of libpq's `PGresult`
/// (which is cleared once, on the connection's thread, before this value exists).
///
/// Why one flat buffer: all field bytes of the result live in one array with one span table,
/// so a result costs a few allocations whatever its size, and rows share it cheaply. The
/// column layout is shared by every result of the same prepared statement. The value is
/// immutable and `Sendable`.
public struct PostgresQueryResult: Sendable, RandomAccessCollection {
    /// Where one field's bytes are in ``Storage/bytes``; `length` -1 is NULL.
    struct FieldSpan {
        let start: Int
        let length: Int32
    }

    /// Column names and types, and a name lookup; shared across results.
    final class ColumnLayout: Sendable {
        let columns: [PostgresColumn]
        /// Built only for wide results; narrow ones are searched linearly (faster).
        private let index: [String: Int]?

        init(columns: [PostgresColumn]) {
            self.columns = columns
            if columns.count > 8 {
                var index: [String: Int] = [:]
                for (position, column) in columns.enumerated() where index[column.name] == nil {
                    index[column.name] = position
                }
                self.index = index
            } else {
                self.index = nil
            }
        }

        /// The first column called `name`.
        func position(of name: String) -> Int? {
            if let index { return index[name] }
            return columns.firstIndex { $0.name == name }
        }

        static let empty = ColumnLayout(columns: [])
    }

    final class Storage: Sendable {
        let layout: ColumnLayout
        let rowCount: Int
        /// Every non-NULL field's text bytes, row-major.
        let bytes: [UInt8]
        /// Field `row * columns.count + column`.
        let fields: [FieldSpan]

        init(layout: ColumnLayout, rowCount: Int, bytes: [UInt8], fields: [FieldSpan]) {
            self.layout = layout
            self.rowCount = rowCount
            self.bytes = bytes
            self.fields = fields
        }

        static let empty = Storage(layout: .empty, rowCount: 0, bytes: [], fields: [])
    }

    let storage: Storage

    /// Rows inserted, updated, deleted, selected or copied, as the server's command tag says;
    /// 0 for commands without a count.
    public let affectedRows: Int

    static let empty = PostgresQueryResult(storage: .empty, affectedRows: 0)

    public var columns: [PostgresColumn] { storage.layout.columns }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.rowCount }

    public subscript(position: Int) -> PostgresRow {
        precondition(position >= 0 && position < storage.rowCount, "row index out of range")
        return PostgresRow(storage: storage, row: position)
    }
}
