import Foundation

/// Reads credential files at start-up, turning every failure into a ``SenderConfigurationError``
/// that names the file.
enum CredentialFile {
    /// The bytes of `path`; `what` says what the file is for ("APNs signing key").
    static func read(_ path: String, _ what: String) throws(SenderConfigurationError) -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw SenderConfigurationError(.fileMissing, file: path, problem: "\(what) does not exist")
        }
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path) else {
            throw SenderConfigurationError(.fileUnreadable, file: path, problem: "\(what) is not readable (check its permissions)")
        }
        return [UInt8](data)
    }

    /// The file as UTF-8 text that must hold a PEM block.
    static func readPEM(_ path: String, _ what: String) throws(SenderConfigurationError) -> String {
        let bytes = try read(path, what)
        guard !bytes.isEmpty else {
            throw SenderConfigurationError(.notPEM, file: path, problem: "\(what) is empty")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("-----BEGIN ") else {
            throw SenderConfigurationError(.notPEM, file: path, problem: "\(what) is not a PEM file (no -----BEGIN line)")
        }
        return text
    }

    /// Whether PEM text holds an encrypted private key.
    static func isEncryptedKey(_ pem: String) -> Bool {
        pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || pem.contains("Proc-Type: 4,ENCRYPTED")
    }
}
