/// The HTTP version an ``HTTPClient`` asks for. A struct with static members so that new
/// preferences (HTTP/3) can be added without breaking callers.
public struct HTTPVersionPreference: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case http2TLS
        case http2PriorKnowledge
        case http1_1
    }

    let kind: Kind

    /// HTTP/2 negotiated by ALPN over TLS; HTTP/1.1 if the server does not offer `h2`, and for
    /// `http://` URLs. The default, and what APNs and FCM speak.
    public static let http2 = HTTPVersionPreference(kind: .http2TLS)
    /// HTTP/2 without negotiation, also over cleartext `http://` (h2c prior knowledge). For
    /// local test servers. With libcurl 7.88.x (Debian 12) each request gets its own connection,
    /// because those versions fail the second request on a reused prior-knowledge connection.
    public static let http2PriorKnowledge = HTTPVersionPreference(kind: .http2PriorKnowledge)
    /// HTTP/1.1 only: one request per connection at a time.
    public static let http1_1 = HTTPVersionPreference(kind: .http1_1)

    public var description: String {
        switch kind {
        case .http2TLS: "http2"
        case .http2PriorKnowledge: "http2PriorKnowledge"
        case .http1_1: "http1.1"
        }
    }
}
