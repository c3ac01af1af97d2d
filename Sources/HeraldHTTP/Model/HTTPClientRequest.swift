import HTTPTypes

/// One request for ``HTTPClient/execute(_:)`` or ``HTTPClient/submit(_:completion:)``.
///
/// Method and header fields are swift-http-types values (`HTTPRequest.Method`, `HTTPFields`),
/// which cannot hold a name that is not an HTTP token or a value with CR, LF or NUL: header
/// injection is ruled out when the request is built. The body is copied to libcurl when the
/// transfer starts, so the value can be dropped or reused as soon as it is handed over.
public struct HTTPClientRequest: Sendable {
    public var method: HTTPRequest.Method
    /// Absolute URL: `https://host[:port]/path?query` (or `http://` for prior-knowledge HTTP/2).
    public var url: String
    public var headerFields: HTTPFields
    public var body: [UInt8]
    /// Overrides ``HTTPClientConfiguration/requestTimeout`` for this request: the bound on the
    /// whole transfer, connecting included.
    public var timeout: Duration?

    public init(
        method: HTTPRequest.Method = .get,
        url: String,
        headerFields: HTTPFields = [:],
        body: [UInt8] = [],
        timeout: Duration? = nil
    ) {
        self.method = method
        self.url = url
        self.headerFields = headerFields
        self.body = body
        self.timeout = timeout
    }
}
