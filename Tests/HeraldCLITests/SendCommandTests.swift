import Foundation
import HeraldSandbox
import HeraldTesting
import Testing

/// `herald send` delivers one push through the configured sender, here the real APNs and FCM
/// senders against the sandbox, and prints the provider's answer.
@Suite struct SendCommandTests {
    static let iosToken = String(repeating: "0a", count: 32)

    /// Runs `herald send …` with the sandbox's configuration, without blocking a thread.
    static func send(_ arguments: [String], sandbox: RunningSandbox, folder: URL) async throws -> (status: Int32?, stdout: String, stderr: String) {
        let process = try HeraldProcess(
            ["send", "--config", sandbox.files.configuration.path] + arguments,
            environment: ["HERALD_DATABASE_URL": "", "HERALD_WORKER_SENDER": "", "HERALD_LOG_LEVEL": "warning"], outputDirectory: folder)
        let status = await process.waitForExit(timeout: .seconds(60))
        return (status, process.stdout, process.stderr)
    }

    @Test func sendsAPayloadAndATemplateToTheSandboxAndPrintsTheAnswers() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-send-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sandbox = try await Sandbox.start(SandboxConfiguration(directory: folder.appendingPathComponent("sandbox")))
        do {
            let payload = folder.appendingPathComponent("payload.json")
            try Data(#"{"aps":{"alert":"hello from herald send"}}"#.utf8).write(to: payload)
            let ios = try await Self.send(["--token", Self.iosToken, "--platform", "ios", "--payload", payload.path], sandbox: sandbox, folder: folder)
            #expect(ios.status == 0, "\(ios.stderr)")
            #expect(ios.stdout.contains("ios token 0a0a…0a0a: sent (apns-id "), "\(ios.stdout)")
            let apns = try #require(sandbox.pushes.first { $0.provider == .apns })
            #expect(apns.token == Self.iosToken)
            #expect(String(decoding: apns.body, as: UTF8.self).contains("hello from herald send"))
            #expect(ios.stdout.contains(try #require(apns.headers["apns-id"])), "the printed apns-id is the request's: \(ios.stdout)")

            let templates = TestEnvironment.packageRoot.appendingPathComponent("templates").path
            let android = try await Self.send(
                [
                    "--token", "fcm-registration-token-1", "--platform", "android", "--event", "TransferIssued", "--param", "100", "--param", "RUB", "--param",
                    "x",
                    "--culture", "en-US", "--templates", templates,
                ], sandbox: sandbox, folder: folder)
            #expect(android.status == 0, "\(android.stderr)")
            #expect(android.stdout.contains("android token fcm-…en-1: sent"), "\(android.stdout)")
            let fcm = try #require(sandbox.pushes.first { $0.provider == .fcm })
            #expect(fcm.token == "fcm-registration-token-1")

            // A refusal is printed as the provider's reason, with exit status 1.
            sandbox.setBehavior(.unregistered, for: Self.iosToken)
            let dead = try await Self.send(["--token", Self.iosToken, "--platform", "ios", "--payload", payload.path], sandbox: sandbox, folder: folder)
            #expect(dead.status == 1, "\(dead.stderr)")
            #expect(dead.stdout.contains("token dead: Unregistered"), "\(dead.stdout)")

            // No sender, no send: the same rule as the worker's.
            let process = try HeraldProcess(
                ["send", "--token", Self.iosToken, "--platform", "ios", "--payload", payload.path],
                environment: ["HERALD_CONFIG": "", "HERALD_WORKER_SENDER": ""], outputDirectory: folder)
            #expect(await process.waitForExit(timeout: .seconds(30)) == 78)
            #expect(process.stderr.contains("worker.sender"), "\(process.stderr)")
        } catch {
            await sandbox.shutdown()
            throw error
        }
        await sandbox.shutdown()
    }
}
