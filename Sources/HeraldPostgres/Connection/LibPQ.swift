import Foundation
internal import CLibPQ

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
    static func consume(_ result: OpaquePointer) -> PostgresQueryResult {
        defer { PQclear(result) }
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var columns: [PostgresColumn] = []
        columns.reserveCapacity(columnCount)
        for column in 0..<columnCount {
            let name = PQfname(result, Int32(column)).map { String(cString: $0) } ?? "?column?"
            columns.append(PostgresColumn(name: name, dataType: PostgresDataType(PQftype(result, Int32(column)))))
        }
        let fieldCount = rowCount * columnCount
        var lengths = [Int32](repeating: -1, count: fieldCount)
        var starts = [Int](repeating: 0, count: fieldCount)
        var total = 0
        for row in 0..<rowCount {
            for column in 0..<columnCount where PQgetisnull(result, Int32(row), Int32(column)) == 0 {
                let length = PQgetlength(result, Int32(row), Int32(column))
                lengths[row * columnCount + column] = length
                total += Int(length)
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(total)
        for row in 0..<rowCount {
            for column in 0..<columnCount {
                let field = row * columnCount + column
                starts[field] = bytes.count
                let length = Int(lengths[field])
                if length > 0, let value = PQgetvalue(result, Int32(row), Int32(column)) {
                    bytes.append(contentsOf: UnsafeRawBufferPointer(start: value, count: length))
                }
            }
        }
        let affected = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        let storage = PostgresQueryResult.Storage(
            columns: columns, rowCount: rowCount, bytes: bytes, starts: starts, lengths: lengths
        )
        return PostgresQueryResult(storage: storage, affectedRows: affected)
    }

    private static func trimmed(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let text = String(cString: pointer).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
