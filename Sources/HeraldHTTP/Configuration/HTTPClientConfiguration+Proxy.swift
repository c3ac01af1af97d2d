extension HTTPClientConfiguration {
    /// An HTTP or HTTPS proxy. Every request is tunnelled with HTTP CONNECT (HTTP/2 cannot go
    /// through a forwarding proxy), with Basic credentials when ``user`` is set.
    /// Its `description` never shows the password.
    public struct Proxy: Sendable, CustomStringConvertible {
        /// `http://host:port` (plain connection to the proxy) or `https://host:port` (TLS to the
        /// proxy, verified against ``caFile`` or the system store).
        public var url: String
        public var user: String?
        public var password: String?
        /// Hosts reached directly, not through the proxy (`CURLOPT_NOPROXY`): names, domains
        /// (`.example.com`), addresses. `["*"]` bypasses the proxy for every host.
        public var noProxy: [String]
        /// For an `https://` proxy: a PEM file of CAs to trust for the proxy's own certificate.
        public var caFile: String?
        /// For an `https://` proxy: verify the proxy's certificate and host name.
        public var verifyPeer: Bool

        public init(
            url: String,
            user: String? = nil,
            password: String? = nil,
            noProxy: [String] = [],
            caFile: String? = nil,
            verifyPeer: Bool = true
        ) {
            self.url = url
            self.user = user
            self.password = password
            self.noProxy = noProxy
            self.caFile = caFile
            self.verifyPeer = verifyPeer
        }

        public var description: String {
            var text = "Proxy(\(HTTPClientError.origin(of: url))"
            if let user { text += ", user: \(user)" }
            if password != nil { text += ", password: <redacted>" }
            if !noProxy.isEmpty { text += ", noProxy: \(noProxy.joined(separator: ","))" }
            return text + ")"
        }
    }
}
