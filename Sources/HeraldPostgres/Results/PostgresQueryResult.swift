/// The rows and the affected-row count of one statement, copied out of libpq's `PGresult`
/// (which is cleared once, on the connection's thread, before this value exists).
///
/// Why one flat buffer: all field bytes of the result live in one array with an offset table,
/// so a result costs a few allocations whatever its size, and rows share it cheaply. The
/// value is immutable and `Sendable`.
public struct PostgresQueryResult: Sendable, RandomAccessCollection {
    final class Storage: Sendable {
        let columns: [PostgresColumn]
        let columnIndex: [String: Int]
        let rowCount: Int
        /// Every non-NULL field's text bytes, row-major.
        let bytes: [UInt8]
        /// For field `row * columns.count + column`: start offset in ``bytes``.
        let starts: [Int]
        /// Same index: length in bytes, or -1 for NULL.
        let lengths: [Int32]

        init(columns: [PostgresColumn], rowCount: Int, bytes: [UInt8], starts: [Int], lengths: [Int32]) {
            self.columns = columns
            var index: [String: Int] = [:]
            for (position, column) in columns.enumerated() where index[column.name] == nil {
                index[column.name] = position
            }
            self.columnIndex = index
            self.rowCount = rowCount
            self.bytes = bytes
            self.starts = starts
            self.lengths = lengths
        }
    }

    let storage: Storage

    /// Rows inserted, updated, deleted, selected or copied, as the server's command tag says;
    /// 0 for commands without a count.
    public let affectedRows: Int

    init(storage: Storage, affectedRows: Int) {
        self.storage = storage
        self.affectedRows = affectedRows
    }

    static let empty = PostgresQueryResult(
        storage: Storage(columns: [], rowCount: 0, bytes: [], starts: [], lengths: []),
        affectedRows: 0
    )

    public var columns: [PostgresColumn] { storage.columns }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.rowCount }

    public subscript(position: Int) -> PostgresRow {
        precondition(position >= 0 && position < storage.rowCount, "row index out of range")
        return PostgresRow(storage: storage, row: position)
    }
}
