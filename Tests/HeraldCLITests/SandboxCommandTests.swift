import Foundation
import HeraldTesting
import Testing

@Suite struct SandboxCommandTests {
    /// `herald sandbox` writes its files, prints how to use it, and stops cleanly on SIGTERM.
    @Test func runsWritesItsFilesAndStopsOnSIGTERM() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-sandbox-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The run is ended by HeraldCLI's timeout (SIGTERM), as an operator's Ctrl-C would.
        let result = try HeraldCLI.run(["sandbox", "--dir", directory.path, "--apns-port", "0", "--fcm-port", "0"], timeout: .seconds(4))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("APNs   https://localhost:"))
        #expect(result.stdout.contains("herald worker --config \(directory.path)/herald.yaml"))
        #expect(result.stderr.contains("SIGTERM, stopping"))
        for name in ["ca.pem", "herald.yaml", "service-account.json", "sandbox.json", "pushes.jsonl", "apns-certificate.pem"] {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), "\(name)")
        }
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("sandbox.json"))) as? [String: Any])
        let keyID = try #require(manifest["key_id"] as? String)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("AuthKey_\(keyID).p8").path))
    }

    /// `--response-delay` sets the delay every push is answered after; a bad value is refused.
    @Test func responseDelayIsAnOption() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-sandbox-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try HeraldCLI.run(
            ["sandbox", "--dir", directory.path, "--apns-port", "0", "--fcm-port", "0", "--response-delay", "30ms"], timeout: .seconds(4)
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Every push is answered after 0.03 seconds"), "\(result.stdout)")
        let refused = try HeraldCLI.run(["sandbox", "--dir", directory.path, "--response-delay", "soon"], timeout: .seconds(10))
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--response-delay must be a duration"), "\(refused.stderr)")
    }
}
