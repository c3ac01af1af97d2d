/// The HTTP version a response was received over (what the connection negotiated).
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)
    public static let http2 = HTTPVersion(major: 2, minor: 0)
    public static let http3 = HTTPVersion(major: 3, minor: 0)

    public var description: String {
        major >= 2 ? "HTTP/\(major)" : "HTTP/\(major).\(minor)"
    }
}
