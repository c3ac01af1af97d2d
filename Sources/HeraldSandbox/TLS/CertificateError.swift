import HeraldSupport

/// Why ``SelfSignedCertificate`` could not make a certificate.
public struct CertificateError: Error, Sendable, CustomStringConvertible {
    public typealias Code = ErrorCode<CertificateError>

    public var code: Code
    public var detail: String

    static func invalidHost(_ host: String) -> CertificateError {
        CertificateError(code: .invalidHost, detail: "not a DNS name or IP address: \(host)")
    }

    public var description: String { "CertificateError.\(code): \(detail)" }
}

extension ErrorCode where Domain == CertificateError {
    /// A host that is neither a DNS name nor an IP literal.
    public static let invalidHost = Self("invalidHost")
}
