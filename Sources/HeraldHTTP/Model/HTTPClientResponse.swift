import HTTPTypes

/// A complete HTTP response. Any status is a response, not an error: callers classify
/// statuses (APNs 410 means "token dead", FCM 429 means "retry later", and so on).
public struct HTTPClientResponse: Sendable {
    /// The HTTP version a response was received over (what the connection negotiated).
    /// swift-http-types leaves versions to the transport, so the client names them.
    public enum Version: Sendable, Hashable, CustomStringConvertible {
        case http1_0, http1_1, http2, http3

        public var description: String {
            switch self {
            case .http1_0: "HTTP/1.0"
            case .http1_1: "HTTP/1.1"
            case .http2: "HTTP/2"
            case .http3: "HTTP/3"
            }
        }
    }

    public var status: HTTPResponse.Status
    /// Final response header fields (informational 1xx responses are dropped). Fields whose
    /// name is not an HTTP token are dropped; values are kept leniently (CR, LF, NUL as spaces).
    public var headerFields: HTTPFields
    public var body: [UInt8]
    /// The version the connection negotiated (HTTP/2 via ALPN, or HTTP/1.1 as a fallback).
    public var version: Version
    /// For diagnostics: the local TCP port of the connection that carried the request, so that
    /// requests multiplexed over one connection can be told apart from requests on another.
    public var localPort: Int?
    /// New connections libcurl opened to carry this request (0 when an existing one was reused).
    public var connectionsOpened: Int
    /// How long the server took to answer, measured by the transport from the moment the
    /// request was about to go on an open connection to the response's end: what a caller
    /// judges the server's speed by, without the time the request queued in this process or
    /// waited for a new connection.
    public var answerTime: Duration?

    /// The body decoded as UTF-8 (invalid bytes become replacement characters).
    public var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }
}
