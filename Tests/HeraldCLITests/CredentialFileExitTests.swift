import Foundation
import HeraldSandbox
import HeraldTesting
import Testing

/// An operator's wrong credential file stops `herald worker`, `herald serve` and `herald api`
/// with exit status 78 (EX_CONFIG) and a message naming the file, before anything is consumed
/// or served; never a crash.
@Suite("credential files at start-up")
struct CredentialFileExitTests {
    static let commands = ["worker", "serve", "api"]

    /// Broker and database that are never reached: the files fail first.
    static let base = [
        "HERALD_CONFIG": "", "HERALD_AMQP_URL": "amqp://guest:guest@127.0.0.1:1/", "HERALD_DATABASE_URL": "postgres://postgres@127.0.0.1:1/none",
        "HERALD_API_JWT_SECRET": String(repeating: "s", count: 32), "HERALD_API_LISTEN": "127.0.0.1:0",
    ]

    let folder: URL
    let certificate: String
    let key: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let pair = try SelfSignedCertificate.generate().issueClientCertificate(commonName: "Apple Push Services: com.example.herald")
        certificate = folder.appendingPathComponent("cert.pem").path
        key = folder.appendingPathComponent("key.pem").path
        try Data(pair.certificatePEM.utf8).write(to: URL(fileURLWithPath: certificate))
        try Data(pair.privateKeyPEM.utf8).write(to: URL(fileURLWithPath: key))
    }

    func write(_ name: String, _ text: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Runs `herald command` with `environment` over ``base`` and expects status 78 with
    /// standard error naming `file` and containing `words`.
    func expectStop(
        _ command: String, _ environment: [String: String], naming file: String, _ words: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try HeraldCLI.run([command], environment: Self.base.merging(environment) { $1 }, timeout: .seconds(30))
        #expect(result.status == 78, "herald \(command) exited \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(file), "\(result.stderr)", sourceLocation: sourceLocation)
        for word in words {
            #expect(result.stderr.contains(word), "\(result.stderr) lacks \(word)", sourceLocation: sourceLocation)
        }
    }

    /// Regression: a .p12 exported without its private key crashed the process inside NIOSSL.
    @Test(arguments: commands) func aPKCS12WithoutAPrivateKey(command: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let p12 = folder.appendingPathComponent("apns.p12").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["pkcs12", "-export", "-nokeys", "-in", certificate, "-out", p12, "-passout", "pass:secret"]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        try expectStop(
            command,
            [
                "HERALD_WORKER_SENDER": "providers", "HERALD_APNS_TOPIC": "com.example.herald", "HERALD_APNS_CERT_PATH": p12,
                "HERALD_APNS_CERT_PASSWORD": "secret",
            ], naming: p12, ["apns.cert_path", "no private key"])
    }

    @Test(arguments: commands) func aCAFileThatHoldsNoCertificate(command: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let ca = try write("ca.pem", "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
        try expectStop(
            command,
            [
                "HERALD_WORKER_SENDER": "providers", "HERALD_APNS_TOPIC": "com.example.herald", "HERALD_APNS_CERT_PATH": certificate,
                "HERALD_APNS_CERT_KEY_PATH": key, "HERALD_APNS_CA_PATH": ca,
            ], naming: ca, ["apns.ca_path"])
    }

    @Test(arguments: commands) func aServiceAccountFileThatIsNotAnObject(command: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let account = try write("service-account.json", "[]")
        try expectStop(
            command, ["HERALD_WORKER_SENDER": "providers", "HERALD_FCM_SERVICE_ACCOUNT_PATH": account], naming: account, ["fcm.service_account_path"])
    }

    @Test(arguments: commands) func anAPNsKeyThatIsADevice(command: String) throws {
        try expectStop(
            command,
            [
                "HERALD_WORKER_SENDER": "providers", "HERALD_APNS_TOPIC": "com.example.herald", "HERALD_APNS_KEY_PATH": "/dev/zero",
                "HERALD_APNS_KEY_ID": "ABCDE12345", "HERALD_APNS_TEAM_ID": "TEAM123456",
            ], naming: "/dev/zero", ["apns.key_path", "not a regular file"])
    }

    /// The API's token key (`api.jwt_public_key_path`): missing, or a file of another kind.
    @Test(arguments: ["serve", "api"]) func aWrongJWTPublicKeyFile(command: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("missing.pem").path
        try expectStop(
            command, ["HERALD_API_JWT_SECRET": "", "HERALD_API_JWT_PUBLIC_KEY_PATH": missing], naming: missing, ["api.jwt_public_key_path", "does not exist"])
        try expectStop(command, ["HERALD_API_JWT_SECRET": "", "HERALD_API_JWT_PUBLIC_KEY_PATH": certificate], naming: certificate, ["api.jwt_public_key_path"])
        let text = try write("key.txt", "ssh-ed25519 AAAA\n")
        try expectStop(
            command, ["HERALD_API_JWT_SECRET": "", "HERALD_API_JWT_PUBLIC_KEY_PATH": text], naming: text, ["api.jwt_public_key_path", "not a PEM file"])
    }

    /// TLS files named in the broker and database URLs are checked at start-up, not at the first
    /// connection (where they would look like an unreachable server).
    @Test(arguments: commands) func missingTLSFilesOfTheConnections(command: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("missing-ca.pem").path
        try expectStop(
            command, ["HERALD_DATABASE_URL": "postgres://postgres@127.0.0.1:1/none?sslmode=verify-full&sslrootcert=\(missing)"], naming: missing,
            ["database.url", "does not exist"])
        let notPEM = try write("client.key", "binary")
        try expectStop(
            command, ["HERALD_AMQP_URL": "amqps://guest:guest@127.0.0.1:1/?cacertfile=\(certificate)&certfile=\(certificate)&keyfile=\(notPEM)"],
            naming: notPEM, ["amqp.url", "not a PEM file"])
    }
}
