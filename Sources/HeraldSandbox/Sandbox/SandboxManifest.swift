import Foundation

/// What a running sandbox writes into its folder's `sandbox.json` (``SandboxFiles/manifest``):
/// its URLs, ids and file paths, for the benchmarks and scripts that drive it, and for its own
/// next start, which reuses the credentials. One type for the writer and every reader.
public struct SandboxManifest: Codable, Sendable, Equatable {
    public var apnsURL: String
    public var fcmURL: String
    public var tokenURI: String
    public var keyID: String
    public var teamID: String
    public var topics: [String]
    public var projectID: String
    public var clientEmail: String
    public var privateKeyID: String
    public var caPath: String
    public var apnsKeyPath: String
    public var serviceAccountPath: String
    /// The sandbox's process, whose CPU time a benchmark reads from `/proc/<pid>/stat`.
    public var pid: Int32?
    public var configPath: String
    public var apnsCertificatePath: String
    public var apnsCertificateKeyPath: String
    /// Where it records every push it accepts, if it does.
    public var recordPath: String?

    enum CodingKeys: String, CodingKey {
        case apnsURL = "apns_url", fcmURL = "fcm_url", tokenURI = "token_uri", keyID = "key_id", teamID = "team_id", topics
        case projectID = "project_id", clientEmail = "client_email", privateKeyID = "private_key_id", caPath = "ca_path"
        case apnsKeyPath = "apns_key_path", serviceAccountPath = "service_account_path", pid, configPath = "config_path"
        case apnsCertificatePath = "apns_certificate_path", apnsCertificateKeyPath = "apns_certificate_key_path", recordPath = "record_path"
    }

    /// Reads the `sandbox.json` in `directory`.
    /// - Throws: ``SandboxError`` (`.invalidFiles`) when it is missing or incomplete.
    public init(directory: URL) throws {
        let file = directory.appendingPathComponent("sandbox.json")
        do {
            self = try JSONDecoder().decode(SandboxManifest.self, from: Data(contentsOf: file))
        } catch {
            throw SandboxError(.invalidFiles, detail: "\(file.path) is missing or incomplete: \(error)")
        }
    }

    init(
        apnsURL: String, fcmURL: String, tokenURI: String, credentials: SandboxCredentials, topics: [String], files: SandboxFiles, recordPath: String?
    ) {
        self.apnsURL = apnsURL
        self.fcmURL = fcmURL
        self.tokenURI = tokenURI
        keyID = credentials.keyID
        teamID = credentials.teamID
        self.topics = topics
        projectID = credentials.projectID
        clientEmail = credentials.clientEmail
        privateKeyID = credentials.privateKeyID
        caPath = files.caCertificate.path
        apnsKeyPath = files.apnsKey.path
        serviceAccountPath = files.serviceAccount.path
        pid = getpid()
        configPath = files.configuration.path
        apnsCertificatePath = files.apnsCertificate.path
        apnsCertificateKeyPath = files.apnsCertificateKey.path
        self.recordPath = recordPath
    }

    func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try (encoder.encode(self) + Data("\n".utf8)).write(to: url, options: .atomic)
    }
}
