import Crypto
import Foundation
import HeraldDelivery
import HeraldHTTP
import HeraldSandbox
import Testing

/// An operator's wrong file never crashes Herald and never hangs it: every problem of a key,
/// certificate, PKCS#12 bundle or CA file is a ``SenderConfigurationError`` naming the file.
@Suite struct CredentialFileTests {
    let folder: URL
    let pair: CertificateKeyPair
    let certificate: String
    let key: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-credential-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        pair = try SelfSignedCertificate.generate().issueClientCertificate(commonName: "Apple Push Services: com.example.herald")
        certificate = folder.appendingPathComponent("cert.pem").path
        key = folder.appendingPathComponent("key.pem").path
        try Data(pair.certificatePEM.utf8).write(to: URL(fileURLWithPath: certificate))
        try Data(pair.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: key))
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
        return path(name)
    }

    /// Runs the openssl tool (as the existing .p12 test does) and requires it to succeed.
    func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl \(arguments.joined(separator: " ")) failed")
    }

    /// A `.p12` made by `openssl pkcs12 -export` with `options`.
    func pkcs12(_ name: String, _ options: [String]) throws -> String {
        try openssl(["pkcs12", "-export", "-in", certificate, "-out", path(name), "-passout", "pass:secret"] + options)
        return path(name)
    }

    func expectError(
        _ code: SenderConfigurationError.Code, file: String, mentioning words: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
        _ configuration: APNsConfiguration
    ) {
        do {
            try configuration.validate()
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(error.file == file, "\(error)", sourceLocation: sourceLocation)
            #expect(error.description.contains(file), "\(error.description)", sourceLocation: sourceLocation)
            for word in words {
                #expect(error.description.contains(word), "\(error.description) lacks \(word)", sourceLocation: sourceLocation)
            }
        }
    }

    func withCertificate(_ certificate: APNsCertificate) -> APNsConfiguration {
        APNsConfiguration(apps: [APNsApp(topic: "com.example.herald", certificate: certificate)])
    }

    /// Regression: NIOSSL ended the process (`fatalError`) on a bundle that opens but holds no
    /// private key, or no certificate.
    @Test func aPKCS12WithoutKeyOrCertificateIsRefusedWithoutACrash() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificateOnly = try pkcs12("cert-only.p12", ["-nokeys"])
        expectError(
            .invalidCertificate, file: certificateOnly, mentioning: ["no private key"], withCertificate(.pkcs12(file: certificateOnly, password: "secret")))
        let plainCertificateOnly = try pkcs12("plain-cert-only.p12", ["-nokeys", "-certpbe", "NONE"])
        expectError(
            .invalidCertificate, file: plainCertificateOnly, mentioning: ["no private key"],
            withCertificate(.pkcs12(file: plainCertificateOnly, password: "secret")))

        let keyOnly = path("key-only.p12")
        try openssl(["pkcs12", "-export", "-nocerts", "-inkey", key, "-out", keyOnly, "-passout", "pass:secret"])
        expectError(.invalidCertificate, file: keyOnly, mentioning: ["no certificate"], withCertificate(.pkcs12(file: keyOnly, password: "secret")))
    }

    /// The check reads the bundles export tools write: OpenSSL 3's AES default, the 3DES of older
    /// tools and Keychain Access, and a key kept unencrypted.
    @Test func bundlesAsExportToolsWriteThemPass() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, options) in [
            ("aes.p12", []), ("3des.p12", ["-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-3DES"]),
            ("plain-key.p12", ["-keypbe", "NONE", "-certpbe", "NONE"]),
        ] {
            let file = try pkcs12(name, ["-inkey", key] + options)
            try withCertificate(.pkcs12(file: file, password: "secret")).validate()
        }
    }

    @Test func brokenPKCS12FilesNameTheFile() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = try pkcs12("good.p12", ["-inkey", key])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let truncated = try write("truncated.p12", Array(bytes.prefix(bytes.count / 2)))
        expectError(.invalidCertificate, file: truncated, mentioning: ["not a PKCS#12"], withCertificate(.pkcs12(file: truncated, password: "secret")))
        let pem = try write("pem.p12", Array(pair.certificatePEM.utf8))
        expectError(.invalidCertificate, file: pem, mentioning: ["not a PKCS#12"], withCertificate(.pkcs12(file: pem, password: "secret")))
        let empty = try write("empty.p12", [])
        expectError(.invalidCertificate, file: empty, mentioning: ["empty"], withCertificate(.pkcs12(file: empty, password: "secret")))
        expectError(.invalidCertificate, file: good, mentioning: ["wrong password"], withCertificate(.pkcs12(file: good, password: nil)))
    }

    @Test func brokenPEMCertificatesAndKeysNameTheFile() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        var corrupt = pair.certificatePEM
        corrupt.replaceSubrange(corrupt.range(of: "\n")!, with: "\n!!!!")
        let badCertificate = try write("corrupt-cert.pem", Array(corrupt.utf8))
        expectError(.invalidCertificate, file: badCertificate, withCertificate(.pem(certificateFile: badCertificate, keyFile: key)))

        let truncatedKey = try write("truncated-key.pem", Array(pair.privateKeyPEM.utf8.prefix(60)))
        expectError(.wrongKeyType, file: truncatedKey, withCertificate(.pem(certificateFile: certificate, keyFile: truncatedKey)))

        let encrypted = path("encrypted-key.pem")
        try openssl(["pkcs8", "-topk8", "-in", key, "-out", encrypted, "-passout", "pass:secret"])
        expectError(.encryptedKey, file: encrypted, mentioning: ["apns.cert_password"], withCertificate(.pem(certificateFile: certificate, keyFile: encrypted)))
        expectError(
            .wrongKeyType, file: encrypted, mentioning: ["wrong password"],
            withCertificate(.pem(certificateFile: certificate, keyFile: encrypted, keyPassword: "guess")))
        try withCertificate(.pem(certificateFile: certificate, keyFile: encrypted, keyPassword: "secret")).validate()
    }

    /// A device, a folder or a huge file named as a credential is refused before it is read
    /// (reading /dev/zero would never end).
    @Test func filesThatAreNotSmallRegularFilesAreRefused() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = { (file: String) in APNsConfiguration.token(topics: ["com.example.herald"], keyFile: file, keyID: "ABCDE12345", teamID: "TEAM123456") }
        expectError(.fileUnreadable, file: "/dev/zero", mentioning: ["not a regular file"], token("/dev/zero"))
        expectError(.fileMissing, file: folder.path, mentioning: ["does not exist"], token(folder.path))
        let huge = try write("huge.p8", Array(repeating: UInt8(ascii: "A"), count: CredentialFile.maximumBytes + 1))
        expectError(.fileUnreadable, file: huge, mentioning: ["bytes"], token(huge))

        // A symbolic link to a good key (how Kubernetes mounts secrets) is followed.
        let good = try write("AuthKey.p8", Array(P256.Signing.PrivateKey().pemRepresentation.utf8))
        let link = path("linked.p8")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: good)
        try token(link).validate()
    }

    @Test func wrongCAFilesAreRefusedAtStartUp() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let garbage = try write("ca.pem", Array("not a certificate\n".utf8))
        let keyAsCA = key
        var truncated = pair.certificatePEM
        truncated.removeLast(40)
        let cut = try write("cut-ca.pem", Array(truncated.utf8))
        for file in [garbage, keyAsCA, cut] {
            var http = HTTPClientConfiguration()
            http.tls.caFile = file
            let apns = APNsConfiguration(
                apps: [APNsApp(topic: "com.example.herald", certificate: .pem(certificateFile: certificate, keyFile: key))], http: http)
            do {
                try apns.validate()
                Issue.record("\(file) was accepted as a CA file")
            } catch {
                #expect(error.file == file && error.description.contains(file), "\(error)")
            }
            do {
                try FCMConfiguration(projects: [FCMProject(serviceAccountFile: path("none.json"))], http: http).validate()
                Issue.record("\(file) was accepted as a CA file")
            } catch {
                #expect(error.file == file, "\(error)")
            }
        }
    }
}
