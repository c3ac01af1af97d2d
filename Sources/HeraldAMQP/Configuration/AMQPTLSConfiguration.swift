/// TLS settings for `amqps://` connections (librabbitmq's OpenSSL socket).
///
/// Paths are PEM files read when the connection opens; a wrong path fails ``AMQPConnection/connect(_:logger:)``
/// with ``AMQPError/Code/tlsFailed``.
public struct AMQPTLSConfiguration: Sendable, Hashable {
    /// CA bundle used to verify the broker; `nil` uses none (then turn `verifyPeer` off).
    public var caCertificatePath: String?
    /// Verify the broker's certificate chain.
    public var verifyPeer: Bool
    /// Verify that the certificate names the host connected to.
    public var verifyHostname: Bool
    /// Client certificate for mutual TLS (needs `clientKeyPath` too).
    public var clientCertificatePath: String?
    /// Private key of the client certificate.
    public var clientKeyPath: String?

    public init(
        caCertificatePath: String? = nil,
        verifyPeer: Bool = true,
        verifyHostname: Bool = true,
        clientCertificatePath: String? = nil,
        clientKeyPath: String? = nil
    ) {
        self.caCertificatePath = caCertificatePath
        self.verifyPeer = verifyPeer
        self.verifyHostname = verifyHostname
        self.clientCertificatePath = clientCertificatePath
        self.clientKeyPath = clientKeyPath
    }
}
