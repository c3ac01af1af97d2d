import Crypto
import CryptoExtras
import Foundation

/// The secrets the sandbox's stand-ins check and a worker signs with: the APNs `.p8` key (with
/// its key id and team id) and the service account's RSA key (with its id and e-mail).
/// Generated on first start and read back from the directory afterwards.
public struct SandboxCredentials: Sendable, Hashable {
    public var teamID: String
    public var keyID: String
    /// The APNs signing key, PKCS#8 PEM (what Apple's `.p8` files hold).
    public var apnsKeyPEM: String
    public var projectID: String
    public var clientEmail: String
    public var privateKeyID: String
    /// The service account's RSA key, PKCS#8 PEM (what Google's JSON files hold).
    public var serviceAccountKeyPEM: String

    /// New random credentials.
    ///
    /// - Throws: swift-crypto's error if RSA key generation fails.
    public static func generate(projectID: String) throws -> SandboxCredentials {
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return SandboxCredentials(
            teamID: randomIdentifier(),
            keyID: randomIdentifier(),
            apnsKeyPEM: P256.Signing.PrivateKey().pemRepresentation,
            projectID: projectID,
            clientEmail: "herald-sandbox@\(projectID).iam.gserviceaccount.com",
            privateKeyID: (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined(),
            serviceAccountKeyPEM: rsa.pkcs8PEMRepresentation
        )
    }

    /// Ten upper-case letters and digits, like Apple's key and team ids.
    static func randomIdentifier() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<10).map { _ in alphabet.randomElement()! })
    }
}
