/// Percent-encoding for URL path segments and form values: unreserved ASCII (RFC 3986) kept,
/// every other byte escaped.
enum PercentEncoding {
    static func escape(_ value: String) -> String {
        // Device tokens (hex) are the common case: nothing to escape, no copy.
        guard !value.utf8.allSatisfy(isUnreserved) else { return value }
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count + 16)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in value.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
