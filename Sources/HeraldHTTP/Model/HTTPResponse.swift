/// A complete HTTP response. Any status is a response, not an error: callers classify
/// statuses (APNs 410 means "token dead", FCM 429 means "retry later", and so on).
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Final response headers (informational 1xx responses are dropped). Lowercase over HTTP/2.
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The version the connection negotiated (HTTP/2 via ALPN, or HTTP/1.1 as a fallback).
    public var version: HTTPVersion
    /// For diagnostics: the local TCP port of the connection that carried the request, so that
    /// requests multiplexed over one connection can be told apart from requests on another.
    public var localPort: Int?
    /// New connections libcurl opened to carry this request (0 when an existing one was reused).
    public var connectionsOpened: Int

    public init(
        status: Int,
        headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [],
        version: HTTPVersion = .http2,
        localPort: Int? = nil,
        connectionsOpened: Int = 0
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.version = version
        self.localPort = localPort
        self.connectionsOpened = connectionsOpened
    }

    /// The body decoded as UTF-8 (invalid bytes become replacement characters).
    public var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }
}
