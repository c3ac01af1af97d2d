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
        let lines = try Self.text("deploy/k8s/configmap.yaml").split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.contains("herald.yaml: |") })
        let embedded = lines[(start + 1)...].prefix { $0.hasPrefix("    ") || $0.isEmpty }.map { String($0.dropFirst(4)) }
        let values = try ConfigurationFile.parse(embedded.joined(separator: "\n"), path: "configmap.yaml")
        #expect(values[.workerMetricsListen] == "0.0.0.0:9464")
        #expect(values[.logFormat] == "json")
    }

    @Test func composeEnvironmentNamesAreKnown() throws {
        let known = Set(SettingKey.all.map(\.environmentName))
        let names = try Self.text("deploy/compose/compose.yaml").split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("HERALD_"), let colon = trimmed.firstIndex(of: ":") else { return nil }
            return String(trimmed[..<colon])
        }
        #expect(names.count >= 5)
        #expect(names.filter { !known.contains($0) } == [])
    }
}
