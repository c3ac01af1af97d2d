import Foundation
import HeraldSandbox
import HeraldTesting
import Testing

/// `herald worker` checks the provider credentials before it consumes anything: a wrong key, a
/// wrong team id or a truncated service-account file stop it with exit status 78, naming the
/// file (or key) and the problem.
@Suite("herald worker start-up")
struct WorkerCommandTests {
    /// Broker and database that are never reached: the credentials fail first.
    static let unreachable = [
        "HERALD_AMQP_URL": "amqp://guest:guest@127.0.0.1:1/", "HERALD_DATABASE_URL": "postgres://postgres@127.0.0.1:1/none",
        "HERALD_WORKER_SENDER": "providers",
    ]

    @Test func theWorkerRefusesToStartWithBadProviderCredentials() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-worker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let credentials = try SandboxCredentials.generate(projectID: "p")
        let wrongKey = folder.appendingPathComponent("AuthKey.p8").path
        try Data(credentials.serviceAccountKeyPEM.utf8).write(to: URL(fileURLWithPath: wrongKey))
        let goodKey = folder.appendingPathComponent("AuthKey-good.p8").path
        try Data(credentials.apnsKeyPEM.utf8).write(to: URL(fileURLWithPath: goodKey))
        let apns = ["HERALD_APNS_TOPIC": "com.example.herald", "HERALD_APNS_KEY_ID": "ABCDE12345", "HERALD_APNS_TEAM_ID": "TEAM123456"]

        let key = try HeraldCLI.run(
            ["worker"], environment: Self.unreachable.merging(apns) { $1 }.merging(["HERALD_APNS_KEY_PATH": wrongKey]) { $1 }, timeout: .seconds(30))
        #expect(key.status == 78)
        #expect(key.stderr.contains(wrongKey) && key.stderr.contains("apns.key_path") && key.stderr.contains("not a P-256"), "\(key.stderr)")

        var team = Self.unreachable.merging(apns) { $1 }
        team["HERALD_APNS_KEY_PATH"] = goodKey
        team["HERALD_APNS_TEAM_ID"] = "team"
        let teamResult = try HeraldCLI.run(["worker"], environment: team, timeout: .seconds(30))
        #expect(teamResult.status == 78)
        #expect(teamResult.stderr.contains("apns.team_id") && teamResult.stderr.contains("not a 10-character Apple identifier"), "\(teamResult.stderr)")

        let truncated = folder.appendingPathComponent("service-account.json").path
        try Data(#"{"type":"service_account","project_id":"p","private_key":"-----BEGIN PRI"#.utf8).write(to: URL(fileURLWithPath: truncated))
        let fcm = try HeraldCLI.run(
            ["worker"], environment: Self.unreachable.merging(["HERALD_FCM_SERVICE_ACCOUNT_PATH": truncated]) { $1 }, timeout: .seconds(30))
        #expect(fcm.status == 78)
        #expect(fcm.stderr.contains(truncated) && fcm.stderr.contains("fcm.service_account_path") && fcm.stderr.contains("not valid JSON"), "\(fcm.stderr)")
    }

    /// No silent default: a worker (or serve, or drain) without a sender would log every push as
    /// sent and acknowledge it.
    @Test(arguments: ["worker", "serve", "drain"]) func refusesToStartWithoutASender(command: String) throws {
        var environment = Self.unreachable
        environment["HERALD_WORKER_SENDER"] = ""
        environment["HERALD_CONFIG"] = ""
        environment["HERALD_API_JWT_SECRET"] = String(repeating: "s", count: 32)
        let result = try HeraldCLI.run([command], environment: environment, timeout: .seconds(30))
        #expect(result.status == 78, "\(result.stderr)")
        for name in ["herald \(command): ", "worker.sender", "HERALD_WORKER_SENDER", "--sender"] {
            #expect(result.stderr.contains(name), "\(result.stderr) lacks \(name)")
        }
    }

    /// The log sender says at start that nothing reaches a device.
    @Test func theLogSenderAnnouncesItself() throws {
        var environment = Self.unreachable
        environment["HERALD_WORKER_SENDER"] = "log"
        environment["HERALD_CONFIG"] = ""
        environment["HERALD_LOG_LEVEL"] = "warning"
        let result = try HeraldCLI.run(["worker"], environment: environment, timeout: .seconds(30))
        #expect(result.status == 1, "the database is unreachable: \(result.stderr)")
        let output = result.stdout + result.stderr
        #expect(output.contains("warning") && output.contains("The log sender is on") && output.contains("reach no device"), "\(output)")
    }

    @Test func theWorkerNamesAMissingBrokerURL() throws {
        let result = try HeraldCLI.run(
            ["worker"], environment: ["HERALD_AMQP_URL": "", "HERALD_DATABASE_URL": "postgres://x@127.0.0.1:1/x", "HERALD_CONFIG": ""], timeout: .seconds(30))
        #expect(result.status == 78)
        #expect(result.stderr.contains("amqp.url"))
    }
}
