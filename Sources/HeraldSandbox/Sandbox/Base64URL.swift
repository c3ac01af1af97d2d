import Foundation

/// Base64url without padding (RFC 7515), as JWTs use it: the stand-ins read token headers.
enum Base64URL {
    static func decode(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}
