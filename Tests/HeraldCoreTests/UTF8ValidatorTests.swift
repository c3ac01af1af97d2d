import PropertyBased
import Testing

@testable import HeraldCore

/// The validator against the standard library's UTF-8 parser, over random documents of ASCII
/// runs (read eight bytes at a time) and multibyte sequences, with an occasional bad byte.
@Suite struct UTF8ValidatorTests {
    /// The offset of the first ill-formed sequence, by the standard library's parser.
    static func reference(_ bytes: [UInt8]) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    @Test func agreesWithTheStandardLibrary() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int.max)) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            let pieces: [[UInt8]] = [
                Array("ы".utf8), Array("€".utf8), Array("😀".utf8), [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0x80],
            ]
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                bytes += (0..<Int.random(in: 0...19, using: &rng)).map { _ in UInt8.random(in: 0x20...0x7E, using: &rng) }
                // Mostly well-formed pieces; the last four are ill-formed.
                let piece = Int.random(in: 0..<(Int.random(in: 0..<4, using: &rng) == 0 ? pieces.count : 3), using: &rng)
                bytes += pieces[piece]
            }
            #expect(UTF8Validator.firstInvalidOffset(bytes) == Self.reference(bytes), "\(bytes)")
        }
    }

    @Test func findsABadByteAtEveryOffsetOfAnASCIIRun() {
        for length in 0..<20 {
            let ascii = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            #expect(UTF8Validator.firstInvalidOffset(ascii) == nil)
            for offset in 0..<length {
                var bytes = ascii
                bytes[offset] = 0x80
                #expect(UTF8Validator.firstInvalidOffset(bytes) == offset)
            }
        }
    }
}
