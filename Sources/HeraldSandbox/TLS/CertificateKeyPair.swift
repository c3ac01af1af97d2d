import Foundation

/// A certificate and its private key as PEM text (the key as PKCS#8 `PRIVATE KEY`).
public struct CertificateKeyPair: Sendable, Hashable {
    public let certificatePEM: String
    public let privateKeyPEM: String

    /// Writes the certificate and the key (the key readable by the owner only).
    ///
    /// - Throws: the file system's error.
    public func write(certificateTo certificateFile: URL, keyTo keyFile: URL) throws {
        try Data(certificatePEM.utf8).write(to: certificateFile, options: .atomic)
        try Data(privateKeyPEM.utf8).write(to: keyFile, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
    }
}
