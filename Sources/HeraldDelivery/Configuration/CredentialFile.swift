import Foundation

/// Reads credential files at start-up, turning every failure into a ``SenderConfigurationError``
/// that names the file: the senders' keys, certificates and service accounts, and (through
/// `herald`) the API's token key and the TLS files of the broker and database URLs, so that an
/// operator's wrong file is reported the same way whichever setting names it.
public enum CredentialFile {
    /// Largest credential file read (keys, certificates and service accounts are a few KiB).
    public static let maximumBytes = 1 << 20

    /// The bytes of `path`; `what` says what the file is for ("APNs signing key").
    public static func read(_ path: String, _ what: String) throws(SenderConfigurationError) -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw SenderConfigurationError(.fileMissing, file: path, problem: "\(what) does not exist")
        }
        // A device (/dev/zero) or a pipe would be read forever; a credential is a small file.
        // Symbolic links are followed (Kubernetes mounts secrets through them).
        let attributes = try? FileManager.default.attributesOfItem(atPath: URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
        guard attributes?[.type] as? FileAttributeType == .typeRegular else {
            throw SenderConfigurationError(.fileUnreadable, file: path, problem: "\(what) is not a regular file")
        }
        if let size = attributes?[.size] as? Int, size > maximumBytes {
            throw SenderConfigurationError(.fileUnreadable, file: path, problem: "\(what) is \(size) bytes; a credential file is at most \(maximumBytes)")
        }
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path) else {
            throw SenderConfigurationError(.fileUnreadable, file: path, problem: "\(what) is not readable (check its permissions)")
        }
        return [UInt8](data)
    }

    /// The file as UTF-8 text that must hold a PEM block.
    public static func readPEM(_ path: String, _ what: String) throws(SenderConfigurationError) -> String {
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
