/// How an ``HTTP2Server`` listens.
public struct HTTP2ServerConfiguration: Sendable {
    /// TLS for the server: its certificate chain and key, the ALPN protocols it offers, and
    /// optionally the CAs whose client certificates it requires.
    public struct TLS: Sendable {
        /// Leaf first, then intermediates/CA, as PEM.
        public var certificateChainPEM: [String]
        public var privateKeyPEM: String
        /// Also offer `http/1.1` in ALPN (and accept clients that negotiate nothing).
        public var allowHTTP1: Bool
        /// When set, every client must present a certificate issued by one of these PEM CAs, or
        /// the handshake fails (unless ``clientCertificateOptional``).
        public var clientCertificateTrustPEM: String?
        /// With ``clientCertificateTrustPEM``: clients may also connect without a certificate
        /// (one they do present must still verify), as APNs accepts token- and
        /// certificate-authenticated clients on the same host.
        public var clientCertificateOptional: Bool = false

        public init(
            certificateChainPEM: [String],
            privateKeyPEM: String,
            allowHTTP1: Bool = true,
            clientCertificateTrustPEM: String? = nil
        ) {
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
            self.allowHTTP1 = allowHTTP1
            self.clientCertificateTrustPEM = clientCertificateTrustPEM
        }

        /// The server certificate of `certificate` (chained to its CA).
        public init(_ certificate: SelfSignedCertificate, allowHTTP1: Bool = true, clientCertificateTrustPEM: String? = nil) {
            self.init(
                certificateChainPEM: [certificate.server.certificatePEM, certificate.ca.certificatePEM],
                privateKeyPEM: certificate.server.privateKeyPEM,
                allowHTTP1: allowHTTP1,
                clientCertificateTrustPEM: clientCertificateTrustPEM
            )
        }
    }

    /// The address to bind; loopback by default.
    public var host: String
    /// The port to bind; 0 picks a free one (read ``HTTP2Server/port``).
    public var port: Int
    /// TLS with ALPN, or nil for cleartext HTTP/2 with prior knowledge (h2c, no upgrade).
    public var tls: TLS?
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` announced to clients.
    public var maxConcurrentStreams: Int
    /// Threads of the server's own event loop group.
    public var eventLoopThreads: Int
    /// RST_STREAM frames a client may send per 30 seconds before the connection is closed as
    /// abusive (NIO's rapid-reset protection; its default is 200). libcurl 7.88 resets every
    /// stream whose response ends in its HEADERS frame (an empty body, as APNs's 200 is), so
    /// the APNs stand-in raises it.
    public var resetFrameLimit: Int

    public init(
        host: String = "127.0.0.1",
        port: Int = 0,
        tls: TLS?,
        maxConcurrentStreams: Int = 1000,
        eventLoopThreads: Int = 1,
        resetFrameLimit: Int = 200
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.maxConcurrentStreams = maxConcurrentStreams
        self.eventLoopThreads = eventLoopThreads
        self.resetFrameLimit = resetFrameLimit
    }
}
