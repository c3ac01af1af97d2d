/// Everything an ``HTTPClient`` needs to know up front: protocol, connection limits, timeouts,
/// TLS trust and client identity, proxy and user agent.
///
/// Herald sends thousands of requests per second to one provider host over a few HTTP/2
/// connections, so the defaults favour that: HTTP/2 over TLS, streams multiplexed on at most two
/// connections, peer verification on. ``validate()`` (called by ``HTTPClient/init(configuration:logger:)``)
/// checks files and values before any request is made and throws `.invalidConfiguration`
/// naming the problem (and the file).
public struct HTTPClientConfiguration: Sendable {
    /// Which HTTP version to ask for.
    public var httpVersion: HTTPVersionPreference
    /// The most connections open to one host at a time (`CURLMOPT_MAX_HOST_CONNECTIONS`).
    /// Requests beyond what these connections can carry wait in the client.
    public var maxConnectionsPerHost: Int
    /// The most connections open in total, all hosts together (`CURLMOPT_MAX_TOTAL_CONNECTIONS`);
    /// nil for no limit beyond ``maxConnectionsPerHost``.
    public var maxTotalConnections: Int?
    /// The most HTTP/2 streams this client opens on one connection
    /// (`CURLMOPT_MAX_CONCURRENT_STREAMS`). libcurl uses the lower of this and the server's
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`.
    public var maxConcurrentStreamsPerConnection: Int
    /// Bound on a whole request, connecting included, unless the request overrides it. It runs
    /// from the moment the driver hands the request to libcurl: a request that first waits for
    /// room on the connections (more in flight than connections × streams) waits outside it.
    public var requestTimeout: Duration
    /// Bound on establishing a connection (TCP, proxy tunnel and TLS handshake).
    public var connectTimeout: Duration
    /// Trust and client identity for TLS.
    public var tls: TLS
    /// The HTTP(S) proxy to tunnel through (HTTP CONNECT), or nil to connect directly.
    /// Environment variables such as `https_proxy` are never consulted.
    public var proxy: Proxy?
    /// The `User-Agent` header sent with every request unless the request sets its own.
    public var userAgent: String?
    /// Responses with a larger body fail with `.responseTooLarge` instead of growing memory.
    public var maxResponseBodySize: Int

    public init(
        httpVersion: HTTPVersionPreference = .http2,
        maxConnectionsPerHost: Int = 2,
        maxTotalConnections: Int? = nil,
        maxConcurrentStreamsPerConnection: Int = 100,
        requestTimeout: Duration = .seconds(30),
        connectTimeout: Duration = .seconds(10),
        tls: TLS = TLS(),
        proxy: Proxy? = nil,
        userAgent: String? = "herald",
        maxResponseBodySize: Int = 16 << 20
    ) {
        self.httpVersion = httpVersion
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.maxTotalConnections = maxTotalConnections
        self.maxConcurrentStreamsPerConnection = maxConcurrentStreamsPerConnection
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.tls = tls
        self.proxy = proxy
        self.userAgent = userAgent
        self.maxResponseBodySize = maxResponseBodySize
    }
}
