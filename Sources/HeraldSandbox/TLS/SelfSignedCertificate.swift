import Crypto
import Foundation
import SwiftASN1
import X509

/// A throwaway certificate authority and a server certificate it signed, for local TLS: the
/// sandbox's APNs/FCM stand-ins and Herald's HTTP tests.
///
/// Clients trust ``ca``'s certificate (libcurl: `CURLOPT_CAINFO` with the `ca.pem` that
/// ``write(to:)`` produces); the server presents ``server``. Keys are P-256; the server
/// certificate names every host and address given (SANs), `localhost` and `127.0.0.1` by default.
/// The CA can also issue client certificates (``issueClientCertificate(commonName:userID:)``)
/// for servers that require one.
///
/// Thread rules: an immutable value; use it from anywhere.
public struct SelfSignedCertificate: Sendable {
    /// The files ``write(to:)`` produced.
    public struct Files: Sendable, Hashable {
        /// `ca.pem`: the CA certificate, what clients trust.
        public let caCertificate: URL
        /// `cert.pem`: the server certificate followed by the CA certificate (the chain).
        public let certificate: URL
        /// `key.pem`: the server's private key.
        public let privateKey: URL
    }

    /// The CA's certificate and key.
    public let ca: CertificateKeyPair
    /// The server's certificate (leaf only) and key.
    public let server: CertificateKeyPair
    /// The host names and IP addresses the server certificate is valid for.
    public let hosts: [String]

    private let caCertificate: Certificate
    private let caKey: P256.Signing.PrivateKey

    /// Makes a new CA and server certificate.
    ///
    /// - Parameters:
    ///   - hosts: DNS names and IPv4/IPv6 literals to put in the subject alternative names.
    ///   - validity: How long both certificates are valid, starting an hour ago (clock skew).
    ///   - organization: The organisation named in both subjects.
    /// - Throws: an `X509`/`SwiftASN1` error if a certificate cannot be encoded, or
    ///   `CertificateError.invalidHost` for a host that is neither a DNS name nor an address.
    public static func generate(
        hosts: [String] = ["localhost", "127.0.0.1"],
        validity: Duration = .seconds(365 * 24 * 3600),
        organization: String = "Herald Sandbox"
    ) throws -> SelfSignedCertificate {
        let notBefore = Date().addingTimeInterval(-3600)
        let notAfter = Date().addingTimeInterval(TimeInterval(validity.components.seconds))

        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            OrganizationName(organization)
            CommonName("\(organization) CA")
        }
        let caPublicKey = Certificate.PublicKey(caKey.publicKey)
        let caCertificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: caPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: caPublicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )

        var names: [GeneralName] = []
        for host in hosts {
            if let address = Self.addressBytes(host) {
                names.append(.ipAddress(.init(contentBytes: address[...])))
            } else if !host.isEmpty, host.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "/") }) {
                names.append(.dnsName(host))
            } else {
                throw CertificateError.invalidHost(host)
            }
        }
        let serverKey = P256.Signing.PrivateKey()
        let serverPublicKey = Certificate.PublicKey(serverKey.publicKey)
        let serverCertificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: serverPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: try DistinguishedName {
                OrganizationName(organization)
                CommonName(hosts.first ?? "localhost")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                SubjectKeyIdentifier(hash: serverPublicKey)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: caPublicKey).keyIdentifier)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )

        return SelfSignedCertificate(
            ca: CertificateKeyPair(
                certificatePEM: try caCertificate.serializeAsPEM().pemString,
                privateKeyPEM: caKey.pemRepresentation
            ),
            server: CertificateKeyPair(
                certificatePEM: try serverCertificate.serializeAsPEM().pemString,
                privateKeyPEM: serverKey.pemRepresentation
            ),
            hosts: hosts,
            caCertificate: caCertificate,
            caKey: caKey
        )
    }

    /// Issues a client certificate (extended key usage `clientAuth`) signed by this CA.
    ///
    /// - Parameters:
    ///   - commonName: The subject's CN.
    ///   - userID: If set, a `UID` attribute in the subject (APNs certificates carry the app's
    ///     bundle id there).
    /// - Throws: an `X509`/`SwiftASN1` error if the certificate cannot be encoded.
    public func issueClientCertificate(commonName: String, userID: String? = nil) throws -> CertificateKeyPair {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        var relativeNames: [RelativeDistinguishedName] = []
        if let userID {
            // UID (RFC 4519), OID 0.9.2342.19200300.100.1.1.
            relativeNames.append(RelativeDistinguishedName(.init(type: [0, 9, 2342, 19_200_300, 100, 1, 1], utf8String: userID)))
        }
        relativeNames.append(RelativeDistinguishedName(.init(type: .RDNAttributeType.commonName, utf8String: commonName)))
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: caCertificate.notValidBefore,
            notValidAfter: caCertificate.notValidAfter,
            issuer: caCertificate.subject,
            subject: DistinguishedName(relativeNames),
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: caCertificate.publicKey).keyIdentifier)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )
        return CertificateKeyPair(certificatePEM: try certificate.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
    }

    /// Writes `ca.pem`, `cert.pem` (server certificate, then the CA) and `key.pem` into
    /// `directory`, creating it if needed; the key is readable by the owner only.
    ///
    /// - Throws: the file system's error.
    @discardableResult
    public func write(to directory: URL) throws -> Files {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files = Files(
            caCertificate: directory.appendingPathComponent("ca.pem"),
            certificate: directory.appendingPathComponent("cert.pem"),
            privateKey: directory.appendingPathComponent("key.pem")
        )
        try Data(ca.certificatePEM.utf8).write(to: files.caCertificate, options: .atomic)
        try CertificateKeyPair(certificatePEM: server.certificatePEM + "\n" + ca.certificatePEM, privateKeyPEM: server.privateKeyPEM)
            .write(certificateTo: files.certificate, keyTo: files.privateKey)
        return files
    }

    /// The 4 or 16 network-order bytes of an IP literal, or nil for a host name.
    private static func addressBytes(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
