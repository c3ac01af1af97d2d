import Foundation
import HeraldPostgres
import HeraldTesting
import Testing

@Suite("Parameters and decoding against PostgreSQL")
struct RoundTripTests {
    static let trickyStrings: [String] = [
        "",
        "plain",
        "it's \"quoted\" `back`",
        "back\\slash \\\\ \\x00 \\n",
        "'; DROP TABLE items; --",
        "$1 $2 $$ $tag$",
        "100% _under_ %_",
        "Привет, мир",
        "你好，世界 日本語 한국어",
        "emoji 🚀👩‍👩‍👧‍👦🏳️‍🌈",
        "combining e\u{301} a\u{308}\u{323}",
        "RTL עברית العربية \u{202E}mixed",
        "tab\tnewline\ncarriage\r",
        "{braces},[brackets],\"NULL\"",
    ]

    @Test func stringsRoundTripUnchanged() async throws {
        try await TestDatabase.with { client, _ in
            try await client.execute("CREATE TABLE items (id serial PRIMARY KEY, value text NOT NULL)")
            for text in Self.trickyStrings {
                let echoed = try await client.query("SELECT $1::text AS v", [text])
                #expect(try echoed.first?.decode(String.self, column: "v") == text)
                try await client.execute("INSERT INTO items (value) VALUES ($1)", [text])
            }
            let rows = try await client.query("SELECT value FROM items ORDER BY id")
            #expect(try rows.map { (row) throws(PostgresError) in try row.decode(String.self, column: "value") } == Self.trickyStrings)
            // The injection attempt was stored as data; the table is still there.
            let found = try await client.query("SELECT count(*) FROM items WHERE value = $1", ["'; DROP TABLE items; --"])
            #expect(try found.first?.decode(Int.self, at: 0) == 1)
        }
    }

    @Test func megabyteStringRoundTrips() async throws {
        try await TestDatabase.with { client, _ in
            let unit = "ab'c\"d\\é🚀"
            let text = String(repeating: unit, count: 1_048_576 / unit.utf8.count + 1)
            #expect(text.utf8.count > 1_048_576)
            let rows = try await client.query("SELECT $1::text AS v, length($1::text) AS n", [text])
            #expect(try rows.first?.decode(String.self, column: "v") == text)
            #expect(try rows.first?.decode(Int.self, column: "n") == text.unicodeScalars.count)
            #expect(try rows.first?.decode(String.self, column: "v").utf8.count == text.utf8.count)
        }
    }

    @Test func nulCharacterIsRefusedNotTruncated() async throws {
        try await TestDatabase.with { client, _ in
            let error = await #expect(throws: PostgresError.self) {
                _ = try await client.query("SELECT $1::text", ["before\u{0}after"])
            }
            #expect(error?.code == .invalidParameter)
            // The connection is still usable.
            let one = try await client.query("SELECT 1").first?.decode(Int.self, at: 0)
            #expect(one == 1)
        }
    }

    @Test func textArraysRoundTrip() async throws {
        try await TestDatabase.with { client, _ in
            try await client.execute("CREATE TABLE devices (id serial PRIMARY KEY, tags text[] NOT NULL)")
            let tagSets: [[String]] = [
                [],
                ["a"],
                ["with,comma", "with\"quote", "with'apostrophe", "{braces}", "}", "{", "back\\slash"],
                ["NULL", "null", "", " spaced ", "Ünïcödé", "🚀"],
                Self.trickyStrings,
            ]
            for tags in tagSets {
                try await client.execute("INSERT INTO devices (tags) VALUES ($1)", [tags])
            }
            let rows = try await client.query("SELECT tags FROM devices ORDER BY id")
            #expect(try rows.map { (row) throws(PostgresError) in try row.decode([String].self, column: "tags") } == tagSets)

            let withNulls: [String?] = ["x", nil, "NULL", nil, ""]
            let echoed = try await client.query("SELECT $1::text[] AS v, array_length($1::text[], 1) AS n", [withNulls])
            #expect(try echoed.first?.decode([String?].self, column: "v") == withNulls)
            #expect(try echoed.first?.decode(Int.self, column: "n") == 5)
            #expect(throws: PostgresError.self) {
                _ = try echoed.first?.decode([String].self, column: "v")
            }

            // Arrays work with ANY(): the device-tag filter Herald needs.
            let matching = try await client.query("SELECT count(*) FROM devices WHERE tags && $1", [["with,comma", "🚀"]])
            #expect(try matching.first?.decode(Int.self, at: 0) == 2)

            let numbers = try await client.query("SELECT $1::int8[] AS v", [[1, -2, Int.max]])
            #expect(try numbers.first?.decode([Int].self, column: "v") == [1, -2, Int.max])
        }
    }

    @Test func byteaWithEveryByteValueRoundTrips() async throws {
        try await TestDatabase.with { client, _ in
            let bytes = (0...255).map { UInt8($0) }
            try await client.execute("CREATE TABLE blobs (id int PRIMARY KEY, data bytea)")
            try await client.execute("INSERT INTO blobs VALUES (1, $1), (2, $2), (3, $3)", [bytes, Data(bytes.reversed()), [UInt8]()])
            let rows = try await client.query("SELECT data, length(data) AS n FROM blobs ORDER BY id")
            #expect(try rows[0].decode([UInt8].self, column: "data") == bytes)
            #expect(try rows[0].decode(Int.self, column: "n") == 256)
            #expect(try rows[1].decode(Data.self, column: "data") == Data(bytes.reversed()))
            #expect(try rows[2].decode([UInt8].self, column: "data") == [])
        }
    }

    @Test func scalarTypesRoundTrip() async throws {
        try await TestDatabase.with { client, _ in
            for value in [0, 1, -1, Int.max, Int.min] {
                #expect(try await client.query("SELECT $1 AS v", [value]).first?.decode(Int.self, column: "v") == value)
            }
            for value: Int64 in [Int64.max, Int64.min] {
                #expect(try await client.query("SELECT $1 AS v", [value]).first?.decode(Int64.self, column: "v") == value)
            }
            for value: Int32 in [Int32.max, Int32.min] {
                #expect(try await client.query("SELECT $1 AS v", [value]).first?.decode(Int32.self, column: "v") == value)
            }
            #expect(try await client.query("SELECT $1 AS v", [Int16(-300)]).first?.decode(Int16.self, column: "v") == -300)
            for value in [true, false] {
                #expect(try await client.query("SELECT $1 AS v", [value]).first?.decode(Bool.self, column: "v") == value)
            }
            for value in [0.0, -0.0, 0.1, -1.5e-300, 1.7976931348623157e308, Double.leastNonzeroMagnitude, Double.pi, .infinity, -.infinity] {
                let decoded = try await client.query("SELECT $1 AS v", [value]).first?.decode(Double.self, column: "v")
                #expect(decoded == value)
            }
            let nan = try await client.query("SELECT $1 AS v", [Double.nan]).first?.decode(Double.self, column: "v")
            #expect(nan?.isNaN == true)
            #expect(try await client.query("SELECT $1 AS v", [Float(1.25)]).first?.decode(Float.self, column: "v") == 1.25)

            let uuid = UUID()
            #expect(try await client.query("SELECT $1 AS v", [uuid]).first?.decode(UUID.self, column: "v") == uuid)
            #expect(try await client.query("SELECT $1 AS v", [uuid]).first?.decode(String.self, column: "v") == uuid.uuidString.lowercased())

            let json = PostgresJSON(#"{"title": "Привет \"мир\"", "n": [1, 2.5, null], "ok": true}"#)
            let jsonRow = try await client.query("SELECT $1 AS v, $1->>'title' AS title", [json]).first
            #expect(try jsonRow?.decode(String.self, column: "title") == "Привет \"мир\"")
            struct Payload: Codable, Equatable { let title: String; let ok: Bool }
            #expect(try jsonRow?.decode(PostgresJSON.self, column: "v").decode(Payload.self) == Payload(title: "Привет \"мир\"", ok: true))
            try await client.execute("CREATE TABLE docs (j json, jb jsonb)")
            try await client.execute("INSERT INTO docs VALUES ($1, $1)", [try PostgresJSON(encoding: Payload(title: "a", ok: false))])
            let doc = try await client.query("SELECT j, jb FROM docs").first
            #expect(try doc?.decode(PostgresJSON.self, column: "j").decode(Payload.self) == Payload(title: "a", ok: false))
            #expect(try doc?.decode(PostgresJSON.self, column: "jb").decode(Payload.self) == Payload(title: "a", ok: false))
        }
    }

    @Test func datesRoundTripToTheMicrosecond() async throws {
        try await TestDatabase.with { client, _ in
            let dates = [
                Date(timeIntervalSince1970: 0),
                Date(timeIntervalSince1970: 1_709_210_096.123456),
                Date(timeIntervalSince1970: -2_208_988_800.25),  // 1900
                Date(timeIntervalSince1970: 4_102_444_800.999999),  // 2100
                Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1_000_000).rounded() / 1_000_000),
            ]
            try await client.execute("CREATE TABLE events (id serial PRIMARY KEY, at timestamptz, local timestamp)")
            for date in dates {
                let row = try await client.query("SELECT $1 AS v, extract(epoch FROM $1) AS epoch", [date]).first
                let decoded = try #require(try row?.decode(Date.self, column: "v"))
                #expect(abs(decoded.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001, "\(date)")
                let epoch = try #require(try row?.decode(Double.self, column: "epoch"))
                #expect(abs(epoch - date.timeIntervalSince1970) < 0.000_001)
                try await client.execute("INSERT INTO events (at, local) VALUES ($1, $1)", [date])
            }
            let stored = try await client.query("SELECT at, local FROM events ORDER BY id")
            for (row, date) in zip(stored, dates) {
                #expect(abs(try row.decode(Date.self, column: "at").timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
                #expect(abs(try row.decode(Date.self, column: "local").timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
            }
            let infinite = try await client.query("SELECT $1 AS a, $2 AS b, 'infinity'::timestamptz AS c", [Date.distantFuture, Date.distantPast]).first
            #expect(try infinite?.decode(Date.self, column: "a") == .distantFuture)
            #expect(try infinite?.decode(Date.self, column: "b") == .distantPast)
            #expect(try infinite?.decode(Date.self, column: "c") == .distantFuture)
        }
    }

    @Test func nullsDecodeAsOptionalOnly() async throws {
        try await TestDatabase.with { client, _ in
            let row = try #require(
                try await client.query(
                    "SELECT $1 AS s, $2 AS i, $3 AS b, $4 AS d, $5 AS t, $6 AS u, $7 AS bytes, $8 AS a, $9 AS j",
                    [
                        String?.none, Int?.none, Bool?.none, Double?.none, Date?.none, UUID?.none, [UInt8]?.none,
                        [String]?.none, PostgresJSON?.none,
                    ]
                ).first
            )
            #expect(row.columns.map(\.dataType) == [.text, .int8, .bool, .float8, .timestamptz, .uuid, .bytea, .textArray, .jsonb])
            #expect(try row.decode(String?.self, column: "s") == nil)
            #expect(try row.decode(Int?.self, column: "i") == nil)
            #expect(try row.decode(Bool?.self, column: "b") == nil)
            #expect(try row.decode(Double?.self, column: "d") == nil)
            #expect(try row.decode(Date?.self, column: "t") == nil)
            #expect(try row.decode(UUID?.self, column: "u") == nil)
            #expect(try row.decode([UInt8]?.self, column: "bytes") == nil)
            #expect(try row.decode([String]?.self, column: "a") == nil)
            #expect(try row.decode(PostgresJSON?.self, column: "j") == nil)
            #expect(try row.isNull(column: "s"))
            do {
                _ = try row.decode(Int.self, column: "i")
                Issue.record("decoding NULL into Int must fail")
            } catch let error as PostgresError {
                #expect(error.code == .decodingFailed)
                #expect(error.column == "i")
            }
            // Untyped NULL and present values through Optional.
            let mixed = try #require(try await client.query("SELECT $1::text AS a, $2 AS b", [PostgresValue.null, Int?.some(7)]).first)
            #expect(try mixed.decode(String?.self, column: "a") == nil)
            #expect(try mixed.decode(Int?.self, column: "b") == 7)
        }
    }

    @Test func typeMismatchNamesTheColumn() async throws {
        try await TestDatabase.with { client, _ in
            let row = try #require(try await client.query("SELECT 'hello'::text AS greeting, 42 AS answer, true AS flag").first)
            expectMismatch(row, Int.self, "greeting")
            expectMismatch(row, String.self, "answer")
            expectMismatch(row, Bool.self, "answer")
            expectMismatch(row, Date.self, "flag")
            do {
                _ = try row.decode(Int.self, column: "greeting")
            } catch let error as PostgresError {
                #expect(error.column == "greeting")
                #expect(!error.description.contains("hello"))
            }
            do {
                _ = try row.decode(Int.self, column: "missing")
                Issue.record("expected an error for an unknown column")
            } catch let error as PostgresError {
                #expect(error.code == .decodingFailed)
                #expect(error.column == "missing")
            }
            #expect(throws: PostgresError.self) { try row.decode(Int.self, at: 7) }
            #expect(try row.decode(Int.self, at: 1) == 42)
            let small = try #require(try await client.query("SELECT 3000000000::int8 AS big").first)
            #expect(throws: PostgresError.self) { try small.decode(Int32.self, column: "big") }
        }
    }

    /// `decode(Int.self, at:)` reads the field in place; it must answer and fail exactly as the
    /// general decoding does.
    @Test func integersByIndexDecodeAsTheGeneralWayDoes() async throws {
        try await TestDatabase.with { client, _ in
            let row = try #require(
                try await client.query(
                    "SELECT '-32768'::int2, 2147483647::int4, '-9223372036854775808'::int8, 4000000000::oid, NULL::int8 AS missing, '12'::text AS word, 0::int8"
                ).first)
            let expected = [-32768, 2_147_483_647, Int.min, 4_000_000_000]
            for (index, value) in expected.enumerated() {
                #expect(try row.decode(Int.self, at: index) == value)
                #expect(try row.decode(Int.self, at: index) == (try row.decode(Int?.self, at: index)))
            }
            #expect(try row.decode(Int.self, at: 6) == 0)
            #expect(try row.decode(Int?.self, at: 4) == nil)
            for (index, column) in [(4, "missing"), (5, "word")] {
                do {
                    _ = try row.decode(Int.self, at: index)
                    Issue.record("decoding \(column) as Int must fail")
                } catch let error as PostgresError {
                    #expect(error.code == .decodingFailed)
                    #expect(error.column == column)
                }
            }
            #expect(throws: PostgresError.self) { try row.decode(Int.self, at: -1) }
            #expect(throws: PostgresError.self) { try row.decode(Int.self, at: 7) }
        }
    }

    @Test func serverErrorsAreTypedAndRedacted() async throws {
        try await TestDatabase.with { client, _ in
            try await client.execute("CREATE TABLE tokens (token text CONSTRAINT tokens_pk PRIMARY KEY)")
            try await client.execute("INSERT INTO tokens VALUES ($1)", ["secret-token-123"])
            do {
                try await client.execute("INSERT INTO tokens VALUES ($1)", ["secret-token-123"])
                Issue.record("expected a unique violation")
            } catch let error as PostgresError {
                #expect(error.code == .uniqueViolation)
                #expect(error.isUniqueViolation)
                #expect(error.sqlState == "23505")
                #expect(error.constraintName == "tokens_pk")
                #expect(error.tableName == "tokens")
                #expect(!error.description.contains("secret-token-123"))
                #expect(error.debugDescription.contains("INSERT INTO tokens VALUES ($1)"))
            }
            do {
                _ = try await client.query("SELECT $1::int", ["not-a-number-secret"])
                Issue.record("expected an invalid input error")
            } catch let error as PostgresError {
                #expect(error.code == .serverError)
                #expect(error.sqlState == "22P02")
                #expect(!error.description.contains("not-a-number-secret"))
            }
            do {
                _ = try await client.query("SELEC broken")
                Issue.record("expected a syntax error")
            } catch let error as PostgresError {
                #expect(error.sqlState == "42601")
            }
            // After errors the pooled connections still work.
            #expect(try await client.query("SELECT count(*) FROM tokens").first?.decode(Int.self, at: 0) == 1)
        }
    }

    @Test func affectedRowsAndStalePlansAreHandled() async throws {
        try await TestDatabase.with(poolSize: 1) { client, _ in
            try await client.execute("CREATE TABLE t (id int, v text)")
            #expect(try await client.execute("INSERT INTO t SELECT g, 'x' FROM generate_series(1, 5) g") == 5)
            #expect(try await client.execute("UPDATE t SET v = $1 WHERE id > $2", ["y", 2]) == 3)
            #expect(try await client.query("SELECT * FROM t ORDER BY id").count == 5)
            // The schema changes under the cached prepared statement: it is re-prepared.
            try await client.execute("ALTER TABLE t ADD COLUMN extra int")
            let rows = try await client.query("SELECT * FROM t ORDER BY id")
            #expect(rows.columns.map(\.name) == ["id", "v", "extra"])
            #expect(try await client.execute("DELETE FROM t WHERE v = $1", ["y"]) == 3)
        }
    }
}

/// Decoding `column` as `type` must fail with a decoding error that names the column.
private func expectMismatch<T: PostgresDecodable>(
    _ row: PostgresRow, _ type: T.Type, _ column: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        _ = try row.decode(type, column: column)
        Issue.record("decoding \(column) as \(T.self) must fail", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == .decodingFailed, sourceLocation: sourceLocation)
        #expect(error.column == column, sourceLocation: sourceLocation)
        #expect(error.description.contains("column"), sourceLocation: sourceLocation)
    }
}
