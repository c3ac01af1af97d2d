/// Why ``SelfSignedCertificate`` could not make a certificate.
public struct CertificateError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// A host that is neither a DNS name nor an IP literal.
        public static let invalidHost = Code("invalidHost")
        public var description: String { rawValue }
    }

    public var code: Code
    public var detail: String

    static func invalidHost(_ host: String) -> CertificateError {
        CertificateError(code: .invalidHost, detail: "not a DNS name or IP address: \(host)")
    }

    public var description: String { "CertificateError.\(code): \(detail)" }
}
