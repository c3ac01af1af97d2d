extension HTTPClientConfiguration {
    /// A client certificate and its private key, as PEM files or as PKCS#12 (`.p12`, the form
    /// Apple's developer portal exports APNs certificates in).
    ///
    /// A struct with static constructors so that new forms can be added without breaking callers.
    /// Its `description` never shows a password.
    public struct ClientCertificate: Sendable, CustomStringConvertible {
        enum Storage: Sendable {
            case pem(certificateFile: String, keyFile: String, keyPassword: String?)
            case pkcs12File(String, password: String?)
            case pkcs12Data([UInt8], password: String?)
        }

        let storage: Storage

        /// A PEM certificate file and a PEM private-key file (encrypted with `keyPassword` if set).
        /// The certificate file may also hold the key; pass it twice then.
        public static func pem(certificateFile: String, keyFile: String, keyPassword: String? = nil) -> ClientCertificate {
            ClientCertificate(storage: .pem(certificateFile: certificateFile, keyFile: keyFile, keyPassword: keyPassword))
        }

        /// A PKCS#12 file holding the certificate and key (`CURLOPT_SSLCERTTYPE "P12"`).
        public static func pkcs12(file: String, password: String?) -> ClientCertificate {
            ClientCertificate(storage: .pkcs12File(file, password: password))
        }

        /// PKCS#12 bytes held in memory, e.g. read from a secret store.
        public static func pkcs12(data: [UInt8], password: String?) -> ClientCertificate {
            ClientCertificate(storage: .pkcs12Data(data, password: password))
        }

        public var description: String {
            switch storage {
            case .pem(let certificateFile, let keyFile, let keyPassword):
                "PEM(certificate: \(certificateFile), key: \(keyFile)\(keyPassword == nil ? "" : ", password: <redacted>"))"
            case .pkcs12File(let file, let password):
                "PKCS#12(file: \(file)\(password == nil ? "" : ", password: <redacted>"))"
            case .pkcs12Data(let data, let password):
                "PKCS#12(\(data.count) bytes\(password == nil ? "" : ", password: <redacted>"))"
            }
        }
    }
}
