import Foundation
import HeraldTesting
import Testing

@testable import herald

/// The configuration examples under `deploy/` use only keys Herald knows, so that an operator
/// who copies them gets no "unknown key" at start-up (and a renamed key cannot go stale there).
@Suite struct DeployExamplesTests {
    static func text(_ path: String) throws -> String {
        try String(contentsOf: TestEnvironment.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func systemdExampleParses() throws {
        let values = try ConfigurationFile.parse(try Self.text("deploy/systemd/herald.yaml.example"), path: "herald.yaml.example")
        #expect(values[.workerPartitions] == "8")
        #expect(values[.amqpQueue] == "w1.pushnotification")
    }

    @Test func kubernetesConfigMapParses() throws {
        let lines = try Self.text("deploy/k8s/base/configmap.yaml").split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.contains("herald.yaml: |") })
        let embedded = lines[(start + 1)...].prefix { $0.hasPrefix("    ") || $0.isEmpty }.map { String($0.dropFirst(4)) }
        let values = try ConfigurationFile.parse(embedded.joined(separator: "\n"), path: "configmap.yaml")
        #expect(values[.workerMetricsListen] == "0.0.0.0:9464")
        #expect(values[.logFormat] == "json")
    }

    @Test(arguments: ["deploy/compose/compose.yaml", "deploy/k8s/overlays/sandbox/providers.yaml", "deploy/k8s/overlays/production/providers.yaml"])
    func environmentNamesAreKnown(_ path: String) throws {
        let known = Set(SettingKey.all.map(\.environmentName))
        let names = try Self.text(path).split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("HERALD_"), let colon = trimmed.firstIndex(of: ":") else { return nil }
            return String(trimmed[..<colon])
        }
        #expect(names.count >= 4)
        #expect(names.filter { !known.contains($0) } == [])
    }
}
