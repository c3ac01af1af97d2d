import Foundation
import JWTKit

/// A Google service-account key file (the JSON that Firebase's console downloads): the project
/// it sends for, the account's e-mail, its RSA private key and the OAuth2 token endpoint.
///
/// ``load(file:)`` checks everything at start-up and throws a ``SenderConfigurationError`` that
/// names the file and the problem (a truncated file, the missing field). Immutable, `Sendable`.
public struct FCMServiceAccount: Sendable {
    public let projectID: String
    public let clientEmail: String
    /// The key's id (`private_key_id`), sent as the assertion's `kid`; nil when the file has none.
    public let privateKeyID: String?
    /// Where access tokens are obtained (`token_uri`).
    public let tokenURI: String
    /// Where the file was read from (for messages).
    public let file: String
    let privateKey: Insecure.RSA.PrivateKey

    /// Google's token endpoint, used when a file has no `token_uri`.
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"

    /// Reads and checks a service-account JSON file.
    ///
    /// - Throws: ``SenderConfigurationError``: `.fileMissing`/`.fileUnreadable`;
    ///   `.invalidServiceAccount` for a file that is not a JSON object (truncated, say) or whose
    ///   `type` is not `service_account`; `.missingField` naming `project_id`, `client_email` or
    ///   `private_key`; `.wrongKeyType` when `private_key` is not an RSA private key.
    public static func load(file: String) throws(SenderConfigurationError) -> FCMServiceAccount {
        let bytes = try CredentialFile.read(file, "service-account file")
        return try FCMServiceAccount(json: bytes, file: file)
    }

    /// A service account from JSON already in memory (`file` is only used in messages).
    public init(json bytes: [UInt8], file: String = "<memory>") throws(SenderConfigurationError) {
        guard !bytes.isEmpty else {
            throw SenderConfigurationError(.invalidServiceAccount, file: file, problem: "the service-account file is empty")
        }
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
                throw SenderConfigurationError(.invalidServiceAccount, file: file, problem: "not a service-account file: the JSON is not an object")
            }
            object = parsed
        } catch let error as SenderConfigurationError {
            throw error
        } catch {
            throw SenderConfigurationError(
                .invalidServiceAccount, file: file,
                problem: "not valid JSON (truncated or damaged?); download the key again from Firebase's console (Settings > Service accounts)",
                underlying: "\(error)"
            )
        }
        if let type = object["type"] as? String, type != "service_account" {
            throw SenderConfigurationError(.invalidServiceAccount, file: file, field: "type", problem: "is '\(type.prefix(40))', not 'service_account'")
        }
        func field(_ name: String) throws(SenderConfigurationError) -> String {
            guard let value = object[name] as? String, !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                let problem = object[name] == nil ? "missing field \(name)" : "field \(name) is empty or not a string"
                throw SenderConfigurationError(
                    .missingField, file: file, field: name, problem: problem + " (the file is truncated or not a service-account key)")
            }
            return value
        }
        projectID = try field("project_id")
        clientEmail = try field("client_email")
        let pem = try field("private_key")
        privateKeyID = (object["private_key_id"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        tokenURI = (object["token_uri"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultTokenURI
        guard projectID.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }) else {
            throw SenderConfigurationError(.invalidServiceAccount, file: file, field: "project_id", problem: "is not a Firebase project id")
        }
        guard tokenURI.lowercased().hasPrefix("https://") || tokenURI.lowercased().hasPrefix("http://") else {
            throw SenderConfigurationError(.invalidServiceAccount, file: file, field: "token_uri", problem: "is not an http(s) URL")
        }
        guard pem.contains("-----BEGIN ") else {
            throw SenderConfigurationError(.wrongKeyType, file: file, field: "private_key", problem: "is not a PEM private key")
        }
        guard !CredentialFile.isEncryptedKey(pem) else {
            throw SenderConfigurationError(.encryptedKey, file: file, field: "private_key", problem: "is encrypted; service-account keys are not")
        }
        do {
            privateKey = try Insecure.RSA.PrivateKey(pem: pem)
        } catch {
            throw SenderConfigurationError(
                .wrongKeyType, file: file, field: "private_key",
                problem: "is not an RSA private key (Google signs service-account assertions with RS256)", underlying: "\(error)"
            )
        }
        self.file = file
    }
}
