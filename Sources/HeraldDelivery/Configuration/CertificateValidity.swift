import Foundation
import HeraldHTTP
import NIOSSL

/// Checks at start-up that an APNs client certificate can be read and is valid now, so that an
/// expired certificate stops the worker with a clear message instead of failing every TLS
/// handshake later.
enum CertificateValidity {
    /// Checks a PEM certificate file (the first certificate in it is the client's) and its key;
    /// returns when the certificate expires.
    @discardableResult
    static func checkPEM(certificateFile: String, keyFile: String, keyPassword: String?, now: Date) throws(SenderConfigurationError) -> Date {
        let text = try CredentialFile.readPEM(certificateFile, "APNs certificate")
        guard text.contains("-----BEGIN CERTIFICATE-----") else {
            throw SenderConfigurationError(.invalidCertificate, file: certificateFile, problem: "holds no PEM certificate (no BEGIN CERTIFICATE block)")
        }
        let leaf: NIOSSLCertificate
        do {
            guard let first = try NIOSSLCertificate.fromPEMBytes(Array(text.utf8)).first else {
                throw SenderConfigurationError(.invalidCertificate, file: certificateFile, problem: "holds no PEM certificate")
            }
            leaf = first
        } catch let error as SenderConfigurationError {
            throw error
        } catch {
            throw SenderConfigurationError(.invalidCertificate, file: certificateFile, problem: "the certificate cannot be parsed", underlying: "\(error)")
        }
        let notAfter = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
        try checkDates(notBefore: Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore)), notAfter: notAfter, file: certificateFile, now: now)

        let keyText = try CredentialFile.readPEM(keyFile, "APNs certificate key")
        do {
            if let keyPassword {
                _ = try NIOSSLPrivateKey(bytes: Array(keyText.utf8), format: .pem) { (setter: ([UInt8]) -> Void) in
                    setter(Array(keyPassword.utf8))
                }
            } else {
                guard !CredentialFile.isEncryptedKey(keyText) else {
                    throw SenderConfigurationError(
                        .encryptedKey, file: keyFile, problem: "the private key is encrypted but no password is configured (apns.cert_password)")
                }
                _ = try NIOSSLPrivateKey(bytes: Array(keyText.utf8), format: .pem)
            }
        } catch let error as SenderConfigurationError {
            throw error
        } catch {
            throw SenderConfigurationError(
                .wrongKeyType, file: keyFile, problem: "the private key cannot be read (wrong password, or not a PEM private key)", underlying: "\(error)")
        }
        return notAfter
    }

    /// Checks a PKCS#12 file: it holds a private key and a certificate, opens with the password,
    /// and its certificate is valid now.
    ///
    /// The structure is read first (``PKCS12Contents``) because NIOSSL ends the process on a
    /// bundle without a private key or without a certificate instead of throwing. Returns when
    /// the certificate expires.
    @discardableResult
    static func checkPKCS12(file: String, password: String?, now: Date) throws(SenderConfigurationError) -> Date {
        let bytes = try CredentialFile.read(file, "APNs PKCS#12 certificate")
        guard !bytes.isEmpty else {
            throw SenderConfigurationError(.invalidCertificate, file: file, problem: "the PKCS#12 file is empty")
        }
        let contents: PKCS12Contents
        do {
            contents = try PKCS12Contents(bytes)
        } catch {
            throw SenderConfigurationError(
                .invalidCertificate, file: file, problem: "not a PKCS#12 (.p12) file", underlying: error.reason
            )
        }
        guard contents.hasVisibleKey else {
            throw SenderConfigurationError(
                .invalidCertificate, file: file,
                problem: "the PKCS#12 file holds no private key (export the certificate together with its key, or give a PEM certificate and key)"
            )
        }
        guard contents.hasVisibleCertificate || contents.hasEncryptedSections else {
            throw SenderConfigurationError(.invalidCertificate, file: file, problem: "the PKCS#12 file holds no certificate")
        }
        let bundle: NIOSSLPKCS12Bundle
        do {
            bundle = try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: password.map { Array($0.utf8) })
        } catch {
            throw SenderConfigurationError(
                .invalidCertificate, file: file,
                problem: "cannot open the PKCS#12 file (wrong password, or not a .p12 file)", underlying: "\(error)"
            )
        }
        guard let leaf = bundle.certificateChain.first else {
            throw SenderConfigurationError(.invalidCertificate, file: file, problem: "the PKCS#12 file holds no certificate")
        }
        let notAfter = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
        try checkDates(notBefore: Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore)), notAfter: notAfter, file: file, now: now)
        return notAfter
    }

    /// Checks the CA files of a provider's HTTP client (`apns.ca_path`, `fcm.ca_path`, the
    /// proxy's): libcurl reads them only at the first connection, where a wrong file would fail
    /// every delivery instead of stopping the worker.
    static func checkTrust(of http: HTTPClientConfiguration) throws(SenderConfigurationError) {
        for file in [http.tls.caFile, http.proxy?.caFile].compactMap({ $0 }) {
            let text = try CredentialFile.readPEM(file, "CA file")
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMBytes(Array(text.utf8))
            } catch {
                throw SenderConfigurationError(.invalidCertificate, file: file, problem: "the CA file's certificates cannot be parsed", underlying: "\(error)")
            }
            guard !certificates.isEmpty else {
                throw SenderConfigurationError(.invalidCertificate, file: file, problem: "the CA file holds no PEM certificate (no BEGIN CERTIFICATE block)")
            }
        }
    }

    static func checkDates(notBefore: Date, notAfter: Date, file: String, now: Date) throws(SenderConfigurationError) {
        let formatter = ISO8601DateFormatter()
        if notAfter < now {
            throw SenderConfigurationError(
                .certificateExpired, file: file,
                problem: "the certificate expired on \(formatter.string(from: notAfter)) (notAfter is in the past); renew it in Apple's developer portal"
            )
        }
        if notBefore > now {
            throw SenderConfigurationError(
                .certificateNotYetValid, file: file,
                problem: "the certificate is not valid before \(formatter.string(from: notBefore)) (check the system clock)"
            )
        }
    }
}
