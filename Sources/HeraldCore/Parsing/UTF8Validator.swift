/// Strict UTF-8 validation over raw bytes (RFC 3629: no overlong forms, no surrogates, nothing
/// above U+10FFFF). The decoders validate a whole document before parsing it, so that every later
/// step can copy byte ranges into `String`s without repair and so that invalid input is rejected
/// with the offset of the first bad byte instead of being silently replaced with U+FFFD.
enum UTF8Validator {
    /// The length of a leading UTF-8 byte order mark (EF BB BF): 3, or 0 without one. Tolerated
    /// at the start of either document format, and skipped.
    static func byteOrderMarkLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }

    /// The offset of the first byte that is not part of a well-formed UTF-8 sequence, or `nil`
    /// when the whole buffer is valid.
    static func firstInvalidOffset(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        let n = bytes.count
        while i < n {
            // ASCII, eight bytes at a time: an event document is mostly ASCII.
            while i &+ 8 <= n, UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i &+= 8
            }
            guard i < n else { break }
            let b0 = bytes[i]
            if b0 < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch b0 {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return i
            }
            if i + length > n { return i }
            let b1 = bytes[i + 1]
            if b1 < lower || b1 > upper { return i }
            var k = 2
            while k < length {
                let b = bytes[i + k]
                if b < 0x80 || b > 0xBF { return i }
                k += 1
            }
            i += length
        }
        return nil
    }

    static func firstInvalidOffset(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { firstInvalidOffset($0) }
    }
}
