import Foundation
import Testing

@testable import HeraldCore

/// Thousands of random and hostile documents: the decoder never crashes, answers each with an
/// event or a typed error that names a field and a reason, and does so within a bounded time.
@Suite struct DecoderFuzzTests {
    let decoder = EventDecoder()

    /// Decodes `bytes`, checks the answer's shape, and returns the time it took.
    @discardableResult
    func probe(_ bytes: [UInt8], contentType: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let decoded = try decoder.decode(bytes, contentType: contentType)
            #expect(!decoded.event.id.isEmpty, sourceLocation: sourceLocation)
        } catch {
            #expect(!error.field.isEmpty && !error.reason.isEmpty, sourceLocation: sourceLocation)
            #expect(!error.description.isEmpty, sourceLocation: sourceLocation)
        }
        return clock.now - start
    }

    @Test func randomBytes() {
        var rng = SplitMix64(seed: 0xC0FFEE)
        let alphabet = Array("<>/=\"'&;#x!?[]{}:,-0123456789 \n\tabcPushNotificationEventIdFilter\\u".utf8) + [0x00, 0xC3, 0xA9, 0xFF, 0xED, 0xF0]
        var worst = Duration.zero
        for _ in 0..<3_000 {
            let count = Int.random(in: 0...400, using: &rng)
            let bytes: [UInt8] = (0..<count).map { _ in
                Bool.random(using: &rng) ? alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] : UInt8.random(in: 0...255, using: &rng)
            }
            worst = max(worst, probe(bytes))
        }
        #expect(worst < .seconds(1))
    }

    /// Seed samples with random byte edits, insertions, deletions and truncations: most are
    /// broken in one place, which is where the typed error must point.
    @Test func mutatedSamples() {
        var rng = SplitMix64(seed: 42)
        let samples = [Array(SeedSamples.xml.utf8), Array(SeedSamples.json.utf8)]
        let snippets = ["<", ">", "</", "&", "&amp;", "\"", "'", "{", "}", "[", "]", ",", ":", "<!--", "]]>", "<![CDATA[", "\\u", "é", "\u{0}"].map {
            Array($0.utf8)
        }
        var decodedCount = 0
        var worst = Duration.zero
        for round in 0..<4_000 {
            var bytes = samples[round % 2]
            for _ in 0..<Int.random(in: 1...3, using: &rng) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.insert(contentsOf: snippets[Int.random(in: 0..<snippets.count, using: &rng)], at: at)
                case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...8, using: &rng)))
                default: bytes.removeSubrange(at...)
                }
            }
            do {
                let start = ContinuousClock.now
                _ = try decoder.decode(bytes)
                worst = max(worst, ContinuousClock.now - start)
                decodedCount += 1
            } catch {
                #expect(!error.field.isEmpty && !error.reason.isEmpty)
            }
        }
        #expect(worst < .seconds(1))
        #expect(decodedCount < 4_000, "mutations must break some documents")
    }

    struct Hostile: Sendable, CustomTestStringConvertible {
        let name: String
        let make: @Sendable () -> [UInt8]
        let code: EventDecodingError.Code?
        var testDescription: String { name }
    }

    static let hostile: [Hostile] = [
        Hostile(
            name: "10 MB XML body", make: { Array("<PushNotification><EventId>".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20) },
            code: .tooLarge),
        Hostile(name: "10 MB JSON body", make: { Array("{\"EventId\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20) }, code: .tooLarge),
        Hostile(name: "XML nested 200 000 deep", make: { Array(String(repeating: "<a>", count: 200_000).utf8) }, code: .limitExceeded),
        Hostile(name: "JSON nested 500 000 deep", make: { Array(String(repeating: "[", count: 500_000).utf8) }, code: .limitExceeded),
        Hostile(name: "JSON objects nested deep", make: { Array(String(repeating: "{\"a\":", count: 100_000).utf8) }, code: .limitExceeded),
        Hostile(
            name: "billion laughs",
            make: {
                var doc = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
                for k in 1...9 { doc += "<!ENTITY lol\(k) \"" + String(repeating: "&lol\(k == 1 ? "" : String(k - 1));", count: 10) + "\">" }
                return Array((doc + "]><PushNotification><EventId>&lol9;</EventId></PushNotification>").utf8)
            }, code: .forbiddenConstruct),
        Hostile(
            name: "external entity",
            make: {
                Array(
                    "<!DOCTYPE PushNotification [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><PushNotification><EventId>&xxe;</EventId></PushNotification>"
                        .utf8)
            }, code: .forbiddenConstruct),
        Hostile(
            name: "parameter entity", make: { Array("<!DOCTYPE a [<!ENTITY % p SYSTEM \"http://127.0.0.1/x\"> %p;]><a/>".utf8) }, code: .forbiddenConstruct),
        Hostile(
            name: "undeclared entity in body", make: { Array(SeedSamples.xml.replacingOccurrences(of: "v1", with: "&lol9;").utf8) }, code: .forbiddenConstruct),
        Hostile(name: "invalid UTF-8 everywhere", make: { [UInt8](repeating: 0xC0, count: 4096) }, code: .invalidUTF8),
        Hostile(name: "truncated UTF-8 at the end", make: { Array(SeedSamples.json.utf8) + [0xE2, 0x82] }, code: .invalidUTF8),
        Hostile(name: "UTF-16 document", make: { Array(SeedSamples.xml.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }, code: .unsupportedEncoding),
        Hostile(
            name: "unterminated comment of 1 MB", make: { Array(("<PushNotification><!--" + String(repeating: "-", count: 1_000_000)).utf8) },
            code: .malformedDocument),
        Hostile(
            name: "unterminated string of 1 MB", make: { Array(("{\"EventId\":\"" + String(repeating: "\\n", count: 500_000)).utf8) }, code: .malformedDocument),
        Hostile(
            name: "30 000 filters",
            make: {
                let filters = String(repeating: "<Filter name=\"UserId\" value=\"1\"/>", count: 30_000)
                return Array(SeedSamples.xml.replacingOccurrences(of: "<EventFilters>", with: "<EventFilters>" + filters).utf8)
            }, code: .limitExceeded),
        Hostile(
            name: "65 attributes", make: { Array(("<PushNotification " + (0..<65).map { "a\($0)='1'" }.joined(separator: " ") + "/>").utf8) },
            code: .limitExceeded),
        Hostile(
            name: "1 MB of JSON keys",
            make: {
                var doc = "{"
                for k in 0..<60_000 { doc += "\"k\(k)\":1," }
                return Array((doc + "\"EventId\":\"x\"}").utf8)
            }, code: .missingField),
        Hostile(name: "NUL bytes", make: { [0x3C, 0x00, 0x00, 0x00] }, code: .unsupportedEncoding),
    ]

    @Test(arguments: hostile) func hostileDocuments(_ h: Hostile) {
        let bytes = h.make()
        let clock = ContinuousClock()
        let start = clock.now
        do {
            _ = try decoder.decode(bytes)
            Issue.record("decoded a hostile document")
        } catch {
            if let code = h.code { #expect(error.code == code, "\(error.debugDescription)") }
        }
        // Linear work on ≤ 1 MiB takes about a second in a debug build on a busy 2-core machine;
        // the bound catches super-linear blow-ups (a quadratic one took minutes).
        #expect(clock.now - start < .seconds(10), "took \(clock.now - start)")
    }
}
