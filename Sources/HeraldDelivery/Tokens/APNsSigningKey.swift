import Foundation
import JWTKit

/// An APNs token-authentication key: the `.p8` file from Apple's developer portal (a P-256
/// private key in PKCS#8 PEM), its 10-character key id and the 10-character team id.
///
/// ``load(file:keyID:teamID:)`` checks everything at start-up and throws a
/// ``SenderConfigurationError`` naming the file and the problem. Immutable and `Sendable`.
public struct APNsSigningKey: Sendable {
    public let keyID: String
    public let teamID: String
    /// Where the key was read from (for messages).
    public let file: String
    let privateKey: ES256PrivateKey

    /// Reads and checks a `.p8` key.
    ///
    /// - Throws: ``SenderConfigurationError``: `.invalidIdentifier` for a key id or team id that
    ///   is not 10 upper-case letters or digits; `.fileMissing`/`.fileUnreadable`; `.notPEM`;
    ///   `.encryptedKey`; `.wrongKeyType` for anything but a P-256 private key.
    public static func load(file: String, keyID: String, teamID: String) throws(SenderConfigurationError) -> APNsSigningKey {
        try checkIdentifier(keyID, field: "key id (apns.key_id)", file: file)
        try checkIdentifier(teamID, field: "team id (apns.team_id)", file: file)
        let pem = try CredentialFile.readPEM(file, "APNs signing key")
        return try APNsSigningKey(pem: pem, keyID: keyID, teamID: teamID, file: file)
    }

    /// A key from PEM text already in memory (`file` is only used in messages).
    public init(pem: String, keyID: String, teamID: String, file: String = "<memory>") throws(SenderConfigurationError) {
        guard !CredentialFile.isEncryptedKey(pem) else {
            throw SenderConfigurationError(
                .encryptedKey, file: file, problem: "the APNs signing key is encrypted; use the .p8 file exactly as Apple's portal gave it")
        }
        guard pem.contains("PRIVATE KEY-----") else {
            throw SenderConfigurationError(
                .wrongKeyType, file: file,
                problem: "holds no private key (found \(Self.pemLabel(pem) ?? "no PEM block")); APNs needs the .p8 P-256 signing key"
            )
        }
        do {
            privateKey = try ES256PrivateKey(pem: pem)
        } catch {
            throw SenderConfigurationError(
                .wrongKeyType, file: file,
                problem: "not a P-256 (ES256) private key (\(Self.describeKey(pem))); APNs needs the .p8 signing key from Apple's developer portal",
                underlying: "\(error)"
            )
        }
        self.keyID = keyID
        self.teamID = teamID
        self.file = file
    }

    /// Apple's key ids and team ids are 10 characters, upper-case letters and digits.
    static func checkIdentifier(_ value: String, field: String, file: String) throws(SenderConfigurationError) {
        let valid =
            value.utf8.count == 10
            && value.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard valid else {
            let shown = value.count <= 32 ? "'\(value)'" : "a \(value.count)-character value"
            throw SenderConfigurationError(
                .invalidIdentifier, file: file, field: field,
                problem: "\(shown) is not a 10-character Apple identifier (upper-case letters and digits)"
            )
        }
    }

    /// The label of the first PEM block, e.g. `CERTIFICATE`.
    static func pemLabel(_ pem: String) -> String? {
        guard let begin = pem.range(of: "-----BEGIN "), let end = pem.range(of: "-----", range: begin.upperBound..<pem.endIndex) else { return nil }
        return String(pem[begin.upperBound..<end.lowerBound])
    }

    /// A short guess at what key a PEM holds, for the error message.
    static func describeKey(_ pem: String) -> String {
        if pem.contains("BEGIN RSA PRIVATE KEY") || (try? Insecure.RSA.PrivateKey(pem: pem)) != nil { return "found an RSA key" }
        if (try? ES384PrivateKey(pem: pem)) != nil { return "found a P-384 key" }
        if (try? ES512PrivateKey(pem: pem)) != nil { return "found a P-521 key" }
        return "the key cannot be parsed"
    }
}
