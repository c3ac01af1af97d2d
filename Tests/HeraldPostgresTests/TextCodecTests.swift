import Foundation
import Testing

@testable import HeraldPostgres

@Suite("Text-format decoding and helpers")
struct TextCodecTests {
    private func cell(_ text: String, _ type: PostgresDataType = .textArray) -> PostgresCell {
        PostgresCell(bytes: Array(text.utf8)[...], isNull: false, dataType: type, columnName: "c", columnIndex: 0)
    }

    @Test func parsesArrayLiterals() throws {
        let parse = { (text: String) throws(PostgresError) in try PostgresTextCodec.parseArray(Array(text.utf8)[...], cell: self.cell(text)) }
        #expect(try parse("{}") == [])
        #expect(try parse("{a,b}") == ["a", "b"])
        #expect(try parse(#"{"a,b","c\"d","\\",NULL,"NULL",null,""}"#) == ["a,b", "c\"d", "\\", nil, "NULL", nil, ""])
        #expect(try parse("{ spaced , x }") == ["spaced", "x"])
        #expect(try parse(#"{a\,b}"#) == ["a,b"])
        #expect(try parse("[0:1]={x,y}") == ["x", "y"])
        #expect(try parse(#"{"{}","}"}"#) == ["{}", "}"])
        #expect(throws: PostgresError.self) { try parse("{{a},{b}}") }
        #expect(throws: PostgresError.self) { try parse("{a") }
        #expect(throws: PostgresError.self) { try parse("a,b") }
        #expect(throws: PostgresError.self) { try parse(#"{"unterminated}"#) }
    }

    @Test func parsesTimestamps() throws {
        let parse = { (text: String) throws(PostgresError) in
            try PostgresTextCodec.parseTimestamp(Array(text.utf8)[...], cell: self.cell(text, .timestamptz))
        }
        #expect(try parse("1970-01-01 00:00:00+00") == Date(timeIntervalSince1970: 0))
        #expect(try parse("2000-01-01 00:00:00.5+00") == Date(timeIntervalSince1970: 946_684_800.5))
        #expect(try parse("2024-02-29 12:34:56.123456+00").timeIntervalSince1970 == 1_709_210_096.123456)
        #expect(try parse("2024-02-29 14:34:56.123456+02") == parse("2024-02-29 12:34:56.123456+00"))
        #expect(try parse("2024-02-29 07:04:56-05:30") == parse("2024-02-29 12:34:56+00"))
        #expect(try parse("1969-12-31 23:59:59+00") == Date(timeIntervalSince1970: -1))
        #expect(try parse("2024-02-29") == parse("2024-02-29 00:00:00+00"))
        #expect(try parse("0001-01-01 00:00:00+00 BC") < parse("0001-01-01 00:00:00+00"))
        #expect(try parse("infinity") == .distantFuture)
        #expect(try parse("-infinity") == .distantPast)
        #expect(throws: PostgresError.self) { try parse("yesterday") }
        #expect(throws: PostgresError.self) { try parse("2024-13-01") }
        #expect(throws: PostgresError.self) { try parse("2024-01-01 10:00") }
    }

    @Test func parsesByteaHex() throws {
        let parse = { (text: String) throws(PostgresError) in
            try PostgresTextCodec.parseByteaHex(Array(text.utf8)[...], cell: self.cell(text, .bytea))
        }
        #expect(try parse("\\x") == [])
        #expect(try parse("\\x00ff7F") == [0, 255, 127])
        #expect(throws: PostgresError.self) { try parse("\\x0") }
        #expect(throws: PostgresError.self) { try parse("\\xzz") }
        #expect(throws: PostgresError.self) { try parse("abc") }
    }

    @Test func formatsFloatsForPostgreSQL() {
        #expect(PostgresTextCodec.formatFloat(Double.infinity) == "Infinity")
        #expect(PostgresTextCodec.formatFloat(-Double.infinity) == "-Infinity")
        #expect(PostgresTextCodec.formatFloat(Double.nan) == "NaN")
        #expect(PostgresTextCodec.formatFloat(0.1) == "0.1")
    }

    @Test func migrationChecksumIsTheSHA256OfTheSQL() {
        #expect(Migration(version: 1, name: "x", sql: "").checksum == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Migration(version: 1, name: "x", sql: "abc").checksum == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func errorDescriptionIsRedacted() {
        var error = PostgresError(code: .uniqueViolation, message: "", call: "PQexecPrepared", sqlState: "23505", query: "INSERT INTO t VALUES ($1)")
        error.serverMessage = "duplicate key value violates unique constraint \"t_pkey\""
        error.serverDetail = "Key (token)=(secret-device-token) already exists."
        error.constraintName = "t_pkey"
        #expect(!error.description.contains("secret-device-token"))
        #expect(!error.description.contains("INSERT"))
        #expect(error.description.contains("23505"))
        #expect(error.description.contains("t_pkey"))
        #expect(error.debugDescription.contains("secret-device-token"))
        #expect(error.debugDescription.contains("INSERT INTO t VALUES ($1)"))
        #expect(error.isUniqueViolation)
    }

    @Test func valueDescriptionHidesTheValue() {
        #expect(!"secret".postgresValue.description.contains("secret"))
    }
}
