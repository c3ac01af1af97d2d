import Foundation

/// The files a running sandbox keeps in its directory. A worker is pointed at the sandbox with
/// ``configuration`` (`herald.yaml`), which names the others.
public struct SandboxFiles: Sendable, Hashable {
    public let directory: URL
    /// The key id, for the `.p8` file name.
    let keyID: String

    /// `ca.pem`: the CA that signed the servers' certificate; what clients trust.
    public var caCertificate: URL { directory.appendingPathComponent("ca.pem") }
    /// `cert.pem` and `key.pem`: the servers' certificate chain and key.
    public var serverCertificate: URL { directory.appendingPathComponent("cert.pem") }
    public var serverKey: URL { directory.appendingPathComponent("key.pem") }
    /// `AuthKey_<KEYID>.p8`: the APNs signing key, named as Apple names it.
    public var apnsKey: URL { directory.appendingPathComponent("AuthKey_\(keyID).p8") }
    /// `service-account.json`: the Firebase service account; its `token_uri` is the sandbox.
    public var serviceAccount: URL { directory.appendingPathComponent("service-account.json") }
    /// `herald.yaml`: configuration keys pointing a worker at the sandbox.
    public var configuration: URL { directory.appendingPathComponent("herald.yaml") }
    /// `sandbox.json`: ports, ids and file names, for scripts.
    public var manifest: URL { directory.appendingPathComponent("sandbox.json") }
    /// `apns-certificate.pem` and `apns-certificate-key.pem`: an APNs client certificate (UID =
    /// the first topic at creation) for certificate-based authentication, issued by `ca.pem`.
    public var apnsCertificate: URL { directory.appendingPathComponent("apns-certificate.pem") }
    public var apnsCertificateKey: URL { directory.appendingPathComponent("apns-certificate-key.pem") }

    /// The credentials and TLS material in `directory`, made on first use and reused afterwards.
    static func loadOrCreate(
        in directory: URL, projectID: String, certificateTopic: String
    ) throws -> (credentials: SandboxCredentials, certificateChainPEM: String, privateKeyPEM: String) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw SandboxError(.cannotWriteFiles, detail: "cannot create \(directory.path): \(error.localizedDescription)")
        }
        let probe = SandboxFiles(directory: directory, keyID: "")
        if let existing = try? readBack(probe), existing.credentials.projectID == projectID {
            return existing
        }
        do {
            let credentials = try SandboxCredentials.generate(projectID: projectID)
            let certificate = try SelfSignedCertificate.generate(hosts: ["localhost", "127.0.0.1"], organization: "Herald Sandbox")
            try certificate.write(to: directory)
            let files = SandboxFiles(directory: directory, keyID: credentials.keyID)
            try writeSecret(credentials.apnsKeyPEM, to: files.apnsKey)
            try writeSecret(credentials.serviceAccountKeyPEM, to: directory.appendingPathComponent(".service-account-key.pem"))
            let client = try certificate.issueClientCertificate(commonName: "Apple Push Services: \(certificateTopic)", userID: certificateTopic)
            try client.write(certificateTo: files.apnsCertificate, keyTo: files.apnsCertificateKey)
            let chain = try String(contentsOf: files.serverCertificate, encoding: .utf8)
            return (credentials, chain, certificate.server.privateKeyPEM)
        } catch let error as SandboxError {
            throw error
        } catch {
            throw SandboxError(.cannotWriteFiles, detail: "cannot write the sandbox files into \(directory.path): \(error)")
        }
    }

    /// Reads credentials written by an earlier start.
    private static func readBack(_ probe: SandboxFiles) throws -> (credentials: SandboxCredentials, certificateChainPEM: String, privateKeyPEM: String) {
        let manifest = try SandboxManifest(directory: probe.directory)
        let files = SandboxFiles(directory: probe.directory, keyID: manifest.keyID)
        let apnsKey = try String(contentsOf: files.apnsKey, encoding: .utf8)
        let secrets = probe.directory.appendingPathComponent(".service-account-key.pem")
        let rsaKey = try String(contentsOf: secrets, encoding: .utf8)
        let chain = try String(contentsOf: files.serverCertificate, encoding: .utf8)
        let key = try String(contentsOf: files.serverKey, encoding: .utf8)
        let credentials = SandboxCredentials(
            teamID: manifest.teamID, keyID: manifest.keyID, apnsKeyPEM: apnsKey, projectID: manifest.projectID, clientEmail: manifest.clientEmail,
            privateKeyID: manifest.privateKeyID, serviceAccountKeyPEM: rsaKey
        )
        return (credentials, chain, key)
    }

    static func writeSecret(_ text: String, to url: URL) throws {
        try Data(text.utf8).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    /// Writes `service-account.json`, `herald.yaml` and `sandbox.json` for the bound ports.
    func writeRunFiles(credentials: SandboxCredentials, topics: [String], apnsURL: String, fcmURL: String, tokenURI: String, recordFile: String?) throws {
        let serviceAccount: [String: Any] = [
            "type": "service_account",
            "project_id": credentials.projectID,
            "private_key_id": credentials.privateKeyID,
            "private_key": credentials.serviceAccountKeyPEM,
            "client_email": credentials.clientEmail,
            "client_id": "100000000000000000000",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/\(credentials.clientEmail)",
            "universe_domain": "googleapis.com",
        ]
        let json = try JSONSerialization.data(withJSONObject: serviceAccount, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try Self.writeSecret(String(decoding: json, as: UTF8.self) + "\n", to: self.serviceAccount)

        let yaml = """
            # Written by `herald sandbox`: points a worker at the local APNs and FCM stand-ins.
            # Use it as the worker's --config (add amqp and database keys, or set them with
            # HERALD_AMQP_URL and HERALD_DATABASE_URL), or copy these keys into your own file.
            worker:
              sender: providers
            apns:
              url: \(apnsURL)
              ca_path: \(caCertificate.path)
              key_path: \(apnsKey.path)
              key_id: \(credentials.keyID)
              team_id: \(credentials.teamID)
              topic: \(topics.joined(separator: ","))
              environment: sandbox
            fcm:
              url: \(fcmURL)
              ca_path: \(caCertificate.path)
              service_account_path: \(self.serviceAccount.path)

            """
        try Data(yaml.utf8).write(to: configuration, options: .atomic)

        try SandboxManifest(
            apnsURL: apnsURL, fcmURL: fcmURL, tokenURI: tokenURI, credentials: credentials, topics: topics, files: self, recordPath: recordFile
        ).write(to: manifest)
    }
}
