import Foundation
import HeraldSandbox
import Testing

@Suite struct SandboxFilesTests {
    @Test func writesEverythingAWorkerNeedsAndReusesItOnTheNextStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-sandbox-files-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let rules = directory.appendingPathExtension("rules.json")
        try Data(#"{"tokens":{"dead-token":{"unregistered":true},"slow":{"delay_ms":5,"fail_first":1}}}"#.utf8).write(to: rules)
        defer { try? FileManager.default.removeItem(at: rules) }

        let first = try await Sandbox.start(SandboxConfiguration(directory: directory, rulesFile: rules.path))
        let files = first.files
        let keyID = first.credentials.keyID
        #expect(first.behaviors.behavior(for: "dead-token") == .unregistered)
        #expect(first.behaviors.behavior(for: "slow") == TokenBehavior(failFirst: 1, delayMilliseconds: 5))
        for file in [files.caCertificate, files.apnsKey, files.serviceAccount, files.configuration, files.manifest] {
            #expect(FileManager.default.fileExists(atPath: file.path), "\(file.lastPathComponent)")
        }
        #expect(files.apnsKey.lastPathComponent == "AuthKey_\(keyID).p8")
        let keyAttributes = try FileManager.default.attributesOfItem(atPath: files.apnsKey.path)
        #expect((keyAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let yaml = try String(contentsOf: files.configuration, encoding: .utf8)
        for line in [
            "url: \(first.apnsURL)", "url: \(first.fcmURL)", "ca_path: \(files.caCertificate.path)", "key_path: \(files.apnsKey.path)",
            "key_id: \(keyID)", "team_id: \(first.credentials.teamID)", "topic: com.example.herald", "service_account_path: \(files.serviceAccount.path)",
            "sender: providers",
        ] {
            #expect(yaml.contains(line), "herald.yaml lacks \(line)")
        }
        let account = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: files.serviceAccount)) as? [String: Any])
        #expect(account["type"] as? String == "service_account")
        #expect(account["token_uri"] as? String == first.tokenURI)
        #expect(account["project_id"] as? String == "herald-sandbox")
        #expect((account["private_key"] as? String)?.contains("BEGIN PRIVATE KEY") == true)
        #expect(account["private_key_id"] as? String == first.credentials.privateKeyID)
        let apnsKey = try String(contentsOf: files.apnsKey, encoding: .utf8)
        #expect(apnsKey.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        await first.shutdown()

        // A second start in the same folder keeps the keys, so a configured worker keeps working.
        let second = try await Sandbox.start(SandboxConfiguration(directory: directory))
        #expect(second.credentials == first.credentials)
        #expect(try String(contentsOf: second.files.apnsKey, encoding: .utf8) == apnsKey)
        await second.shutdown()
    }

    @Test func aBadRulesFileIsATypedErrorNamingTheFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-sandbox-rules-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = await #expect(throws: SandboxError.self) {
            _ = try await Sandbox.start(SandboxConfiguration(directory: directory, rulesFile: "/nonexistent/rules.json"))
        }
        #expect(error?.code == .invalidRules)
        #expect(error?.description.contains("/nonexistent/rules.json") == true)
    }
}
