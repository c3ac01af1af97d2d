import Foundation

extension String {
    /// This text as one URL path segment or form value: RFC 3986's unreserved characters kept,
    /// the rest percent-encoded by Foundation's codec. Device tokens (hex), the common case, need
    /// nothing: returned as they are, without a copy.
    public var percentEncodedComponent: String {
        guard !utf8.allSatisfy(Self.isUnreserved) else { return self }
        return addingPercentEncoding(withAllowedCharacters: .urlUnreserved) ?? self
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

extension CharacterSet {
    /// RFC 3986's unreserved characters.
    public static let urlUnreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
