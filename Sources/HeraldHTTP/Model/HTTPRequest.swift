/// One HTTP request for ``HTTPClient/execute(_:)``.
///
/// Header names and values must not contain CR, LF or NUL (``HTTPClient/execute(_:)`` throws
/// `.invalidRequest` otherwise). The body is copied to libcurl when the transfer starts, so the
/// value can be dropped or reused as soon as `execute` is called.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// Absolute URL: `https://host[:port]/path?query` (or `http://` for prior-knowledge HTTP/2).
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Overrides ``HTTPClientConfiguration/requestTimeout`` for this request: the bound on the
    /// whole transfer, connecting included.
    public var timeout: Duration?

    public init(
        method: HTTPMethod = .get,
        url: String,
        headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [],
        timeout: Duration? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}
