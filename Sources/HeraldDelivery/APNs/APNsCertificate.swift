import HeraldHTTP

/// An APNs client certificate (certificate-based authentication): a `.p12` file with its
/// password, as Apple's portal and Keychain export it, or a PEM certificate with its PEM key.
/// Development and production certificates are both accepted; the ``APNsEnvironment`` must match.
/// Its `description` never shows a password.
public struct APNsCertificate: Sendable, CustomStringConvertible {
    enum Storage: Sendable {
        case pkcs12(file: String, password: String?)
        case pem(certificateFile: String, keyFile: String, keyPassword: String?)
    }

    let storage: Storage

    /// A PKCS#12 (`.p12`) file holding the certificate and its key.
    public static func pkcs12(file: String, password: String?) -> APNsCertificate {
        APNsCertificate(storage: .pkcs12(file: file, password: password))
    }

    /// A PEM certificate file and a PEM key file (the same file twice when it holds both).
    public static func pem(certificateFile: String, keyFile: String, keyPassword: String? = nil) -> APNsCertificate {
        APNsCertificate(storage: .pem(certificateFile: certificateFile, keyFile: keyFile, keyPassword: keyPassword))
    }

    /// The certificate file (for messages).
    public var file: String {
        switch storage {
        case .pkcs12(let file, _): file
        case .pem(let certificateFile, _, _): certificateFile
        }
    }

    var clientCertificate: HTTPClientConfiguration.ClientCertificate {
        switch storage {
        case .pkcs12(let file, let password): .pkcs12(file: file, password: password)
        case .pem(let certificateFile, let keyFile, let keyPassword): .pem(certificateFile: certificateFile, keyFile: keyFile, keyPassword: keyPassword)
        }
    }

    public var description: String { clientCertificate.description }
}
