/// Percent-encoding for URL path segments and form values: unreserved ASCII (RFC 3986) kept,
/// every other byte escaped.
enum PercentEncoding {
    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
            }
        }
        return out
    }
}
