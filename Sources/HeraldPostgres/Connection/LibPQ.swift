internal import CLibPQ
import Foundation

/// The one funnel that turns libpq's return values into ``PostgresError``s, reading the
/// library's own message immediately (before any other libpq call can replace it), and that
/// copies results out of `PGresult`.
///
/// Thread rule: every function here takes a `PGconn*`/`PGresult*` and must run on the thread
/// that owns it.
enum LibPQ {
    /// Checks a result from `PQexec`, `PQprepare`, `PQexecPrepared` or `PQgetResult`.
    /// On success returns it (the caller clears it); on failure clears it and throws.
    static func check(
        _ result: OpaquePointer?, connection: OpaquePointer, call: String, query: String?
    ) throws(PostgresError) -> OpaquePointer {
        guard let result else {
            // NULL: out of memory or the connection could not send the command.
            throw connectionError(connection, call: call, query: query)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE, PGRES_PIPELINE_SYNC:
            return result
        default:
            let error = resultError(result, connection: connection, call: call, query: query)
            PQclear(result)
            throw error
        }
    }

    /// A typed error from a failed result, with the server's diagnostic fields.
    static func resultError(_ result: OpaquePointer, connection: OpaquePointer, call: String, query: String?) -> PostgresError {
        func field(_ code: UInt8) -> String? {
            guard let pointer = PQresultErrorField(result, Int32(code)) else { return nil }
            return String(cString: pointer)
        }
        let sqlState = field(UInt8(ascii: "C"))
        let connectionBad = PQstatus(connection) == CONNECTION_BAD
        var error = PostgresError(
            code: code(forSQLState: sqlState, connectionBad: connectionBad),
            message: "",
            call: call,
            sqlState: sqlState,
            query: query
        )
        error.serverMessage = field(UInt8(ascii: "M"))
        error.serverDetail = field(UInt8(ascii: "D"))
        error.serverHint = field(UInt8(ascii: "H"))
        error.schemaName = field(UInt8(ascii: "s"))
        error.tableName = field(UInt8(ascii: "t"))
        error.columnName = field(UInt8(ascii: "c"))
        error.constraintName = field(UInt8(ascii: "n"))
        if sqlState == nil {
            // A client-side failure (e.g. the connection dropped): libpq's message has no values.
            error.message = trimmed(PQresultErrorMessage(result)) ?? trimmed(PQerrorMessage(connection)) ?? ""
        } else if error.code == .connectionLost {
            error.message = "the server closed the connection"
        }
        return error
    }

    /// A typed error from the connection's own message (`PQerrorMessage`).
    static func connectionError(
        _ connection: OpaquePointer?, call: String, query: String? = nil, code explicitCode: PostgresError.Code? = nil
    ) -> PostgresError {
        let message = connection.flatMap { trimmed(PQerrorMessage($0)) } ?? "libpq returned NULL (out of memory?)"
        let code: PostgresError.Code
        if let explicitCode {
            code = explicitCode
        } else if let connection, PQstatus(connection) == CONNECTION_BAD {
            code = .connectionLost
        } else {
            code = .clientError
        }
        return PostgresError(code: code, message: message, call: call, query: query)
    }

    static func code(forSQLState sqlState: String?, connectionBad: Bool) -> PostgresError.Code {
        if connectionBad { return .connectionLost }
        switch sqlState {
        case "23505": return .uniqueViolation
        case "40001", "40P01": return .serializationFailure
        case "57014", "55P03": return .timeout
        case "57P01", "57P02", "57P03": return .connectionLost
        case let state? where state.hasPrefix("08"): return .connectionLost
        case nil: return .clientError
        default: return .serverError
        }
    }

    /// Copies every field of `result` into one buffer, then clears `result` (exactly once).
    /// `cached` is the layout of an earlier result of the same prepared statement; it is
    /// reused when names and types still match, saving the per-result column allocations.
    static func consume(_ result: OpaquePointer, reusing cached: PostgresQueryResult.ColumnLayout? = nil) -> PostgresQueryResult {
        defer { PQclear(result) }
        let affected = parseCount(PQcmdTuples(result))
        let columnCount = Int(PQnfields(result))
        if columnCount == 0 { return PostgresQueryResult(storage: .empty, affectedRows: affected) }
        let rowCount = Int(PQntuples(result))

        let layout: PostgresQueryResult.ColumnLayout
        if let cached, layoutMatches(cached, result, columnCount: columnCount) {
            layout = cached
        } else {
            var columns: [PostgresColumn] = []
            columns.reserveCapacity(columnCount)
            for column in 0..<Int32(columnCount) {
                let name = PQfname(result, column).map { String(cString: $0) } ?? "?column?"
                columns.append(PostgresColumn(name: name, dataType: PostgresDataType(PQftype(result, column))))
            }
            layout = PostgresQueryResult.ColumnLayout(columns: columns)
        }

        var total = 0
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                total += Int(PQgetlength(result, row, column))
            }
        }
        var fields: [PostgresQueryResult.FieldSpan] = []
        fields.reserveCapacity(rowCount * columnCount)
        let bytes = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var offset = 0
            for row in 0..<Int32(rowCount) {
                for column in 0..<Int32(columnCount) {
                    if PQgetisnull(result, row, column) != 0 {
                        fields.append(.init(start: offset, length: -1))
                        continue
                    }
                    let length = PQgetlength(result, row, column)
                    if length > 0, let value = PQgetvalue(result, row, column) {
                        memcpy(buffer.baseAddress! + offset, value, Int(length))
                    }
                    fields.append(.init(start: offset, length: length))
                    offset += Int(length)
                }
            }
            initialized = offset
        }
        let storage = PostgresQueryResult.Storage(layout: layout, rowCount: rowCount, bytes: bytes, fields: fields)
        return PostgresQueryResult(storage: storage, affectedRows: affected)
    }

    private static func layoutMatches(
        _ layout: PostgresQueryResult.ColumnLayout, _ result: OpaquePointer, columnCount: Int
    ) -> Bool {
        guard layout.columns.count == columnCount else { return false }
        for (position, column) in layout.columns.enumerated() {
            guard PQftype(result, Int32(position)) == column.dataType.rawValue,
                let cName = PQfname(result, Int32(position))
            else { return false }
            var name = column.name
            let equal = name.withUTF8 { utf8 in
                strlen(cName) == utf8.count && (utf8.isEmpty || memcmp(cName, utf8.baseAddress!, utf8.count) == 0)
            }
            if !equal { return false }
        }
        return true
    }

    /// The decimal count of `PQcmdTuples`, without building a `String`; 0 when empty.
    private static func parseCount(_ text: UnsafeMutablePointer<CChar>?) -> Int {
        guard var pointer = text.map({ UnsafePointer($0) }) else { return 0 }
        var value = 0
        while pointer.pointee >= 0x30, pointer.pointee <= 0x39 {
            value = value &* 10 &+ Int(pointer.pointee - 0x30)
            pointer += 1
        }
        return value
    }

    private static func trimmed(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let text = String(cString: pointer).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
