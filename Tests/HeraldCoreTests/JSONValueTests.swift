import Foundation
import PropertyBased
import Testing

@testable import HeraldCore

@Suite struct JSONValueTests {
    func parse(_ text: String, depth: Int = 64) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8), limits: .init(maxDepth: depth))
    }

    @Test func canonicalSerializationSortsKeysByBytesAndEscapesMinimally() {
        let value = JSONValue.object([
            "b": .array([.int(1), .number("-0.5e3"), .bool(true), .null]),
            "a": .string("q\"b\\s/\n\r\t\u{08}\u{0C}\u{01}\u{7F}é😀"),
            "B": .object([:]),
            "aa": .array([]),
        ])
        #expect(value.serializedString() == #"{"B":{},"a":"q\"b\\s/\n\r\t\b\f\u0001\#u{7F}é😀","aa":[],"b":[1,-0.5e3,true,null]}"#)
        #expect(
            value.prettyPrinted() == """
                {
                  "B": {},
                  "a": "q\\"b\\\\s/\\n\\r\\t\\b\\f\\u0001\u{7F}é😀",
                  "aa": [],
                  "b": [
                    1,
                    -0.5e3,
                    true,
                    null
                  ]
                }
                """)
    }

    @Test func parsesEscapesAndSurrogatePairs() throws {
        #expect(try parse(#"["\u0041\u00e9\u20AC\ud83d\ude00\/\"\\\b\f\n\r\t"]"#) == .array([.string("Aé€😀/\"\\\u{08}\u{0C}\n\r\t")]))
        #expect(try parse(" {\"a\" : [ ] , \"b\":{}} ") == .object(["a": .array([]), "b": .object([:])]))
        #expect(try parse("-0") == .number("-0"))
        #expect(try parse("1.5E+10") == .number("1.5E+10"))
    }

    @Test(arguments: [
        "", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "[1,]", "{\"a\"}", "{\"a\":1,}", "[1 2]", "\"\u{01}\"", "\"\\x\"", "\"\\u12\"", "\"abc", "{1:2}",
        "[", "]", "\"\\udc00\"", "\"\\ud800\\u0041\"", "NaN", "Infinity", "{\"a\":1,\"a\":2}",
    ])
    func rejectsInvalidJSON(_ text: String) {
        #expect(throws: JSONParser.SyntaxError.self) { try parse(text) }
    }

    @Test func depthLimitIsExact() throws {
        #expect(throws: Never.self) { try parse("[[[1]]]", depth: 3) }
        #expect(throws: JSONParser.SyntaxError.self) { try parse("[[[[1]]]]", depth: 3) }
        #expect(throws: JSONParser.SyntaxError.self) { try parse("{\"a\":{\"a\":{\"a\":{}}}}", depth: 3) }
    }

    /// The public entry point (API request bodies): UTF-8 checked first, then the same rules.
    @Test func parsingFromOutside() throws {
        #expect(try JSONValue(parsing: Array(#"{"a":[1,"b"]}"#.utf8), maxDepth: 4) == .object(["a": .array([.int(1), .string("b")])]))
        #expect { try JSONValue(parsing: Array(#"{"a":1,"a":1}"#.utf8), maxDepth: 4) } throws: {
            let error = $0 as? JSONSyntaxError
            return error?.code == .malformed && error?.offset == 7 && error?.reason == "duplicate key in an object"
        }
        #expect { try JSONValue(parsing: [0x22, 0xC0, 0xAF, 0x22], maxDepth: 4) } throws: {
            ($0 as? JSONSyntaxError)?.code == .invalidUTF8 && ($0 as? JSONSyntaxError)?.offset == 1
        }
        #expect { try JSONValue(parsing: Array("[[[1]]]".utf8), maxDepth: 2) } throws: { ($0 as? JSONSyntaxError)?.code == .tooDeep }
    }

    @Test(
        arguments: [
            ("0", 0), ("-0", 0), ("42", 42), ("-42", -42), ("100.0", 100), ("1e2", 100), ("1E+2", 100), ("0.5e1", 5), ("12.50e1", 125),
            ("9007199254740993", 9_007_199_254_740_993), ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min),
            ("922337203685477580.7e1", Int.max), ("0e999999999999999999", 0), ("0.000", 0),
        ] as [(String, Int)])
    func wholeNumbersAreExact(_ literal: String, _ value: Int) {
        #expect(JSONValue.number(literal).integerValue == value)
    }

    @Test(arguments: [
        "0.5", "1e-1", "1.05e1", "9223372036854775808", "-9223372036854775809", "1e19", "1e400", "1e-400",
        "123456789012345678901234567890", "1e99999999999999999999",
    ])
    func otherNumbersAreNoInteger(_ literal: String) {
        #expect(JSONValue.number(literal).integerValue == nil)
    }

    /// Random JSON values survive serialize → parse unchanged, and Foundation reads our
    /// canonical output as the same value.
    @Test func roundTripsRandomValues() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            let value = JSONValueTests.randomValue(depth: 4, using: &rng)
            let bytes = value.serialized()
            let parsed = try? JSONParser.parse(bytes, limits: .init(maxDepth: 64))
            #expect(parsed == value)
            let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            #expect(foundation != nil, "Foundation rejects \(String(decoding: bytes, as: UTF8.self))")
            let pretty = try? JSONParser.parse(Array(value.prettyPrinted().utf8), limits: .init(maxDepth: 64))
            #expect(pretty == value)
        }
    }

    static func randomValue(depth: Int, using rng: inout SplitMix64) -> JSONValue {
        let choice = depth == 0 ? Int.random(in: 0..<4, using: &rng) : Int.random(in: 0..<6, using: &rng)
        switch choice {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int.random(in: -1_000_000...1_000_000, using: &rng))
        case 3: return .string(randomString(using: &rng))
        case 4: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomValue(depth: depth - 1, using: &rng) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) { members[randomString(using: &rng)] = randomValue(depth: depth - 1, using: &rng) }
            return .object(members)
        }
    }

    static func randomString(using rng: inout SplitMix64) -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "ж", "€", "\u{2028}", "😀", "{", "}"]
        return String(String.UnicodeScalarView((0..<Int.random(in: 0...8, using: &rng)).map { _ in pool[Int.random(in: 0..<pool.count, using: &rng)] }))
    }
}

/// A tiny deterministic generator for reproducible random test data.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
