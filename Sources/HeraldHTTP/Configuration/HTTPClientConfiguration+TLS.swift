extension HTTPClientConfiguration {
    /// How the client trusts servers and proves its own identity.
    ///
    /// With neither ``caFile`` nor ``caPEM`` the system trust store is used. Both may be given:
    /// the client then trusts the certificates of both.
    public struct TLS: Sendable {
        /// A PEM file of CA certificates to trust instead of the system store (`CURLOPT_CAINFO`).
        public var caFile: String?
        /// PEM text of CA certificates to trust (`CURLOPT_CAINFO_BLOB`).
        public var caPEM: [UInt8]?
        /// Verify the server's certificate chain. Turn off only for experiments.
        public var verifyPeer: Bool
        /// Verify that the certificate names the host in the URL.
        public var verifyHost: Bool
        /// The client certificate to present (APNs certificate-based authentication), if any.
        public var clientCertificate: ClientCertificate?

        public init(
            caFile: String? = nil,
            caPEM: [UInt8]? = nil,
            verifyPeer: Bool = true,
            verifyHost: Bool = true,
            clientCertificate: ClientCertificate? = nil
        ) {
            self.caFile = caFile
            self.caPEM = caPEM
            self.verifyPeer = verifyPeer
            self.verifyHost = verifyHost
            self.clientCertificate = clientCertificate
        }
    }
}
