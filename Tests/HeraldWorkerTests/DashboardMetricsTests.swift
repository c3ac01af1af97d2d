import Foundation
import HTTPTypes
import HeraldAMQP
import HeraldHTTP
import HeraldStore
import HeraldTesting
import Testing

/// `deploy/grafana/herald.json` and `deploy/prometheus/alerts.yaml` name only metrics Herald
/// exports: a running `herald worker` (with `worker.metrics_listen`) is scraped after it has
/// delivered and dead-lettered something, and every `herald_…` name of the dashboard's and the
/// rules' expressions must be in the scrape. (`scripts/check-alerts.sh` runs promtool on the
/// rules.)
@Suite("Dashboard and alert metrics", .timeLimit(.minutes(2)))
struct DashboardMetricsTests {
    /// Every `herald_…` name in a text (PromQL expressions, JSON or YAML holding them).
    static func metricNames(in text: String) -> Set<String> {
        let regex = /herald_[a-z0-9_]+/
        return Set(text.matches(of: regex).map { String($0.output) })
    }

    /// The metric names of a Prometheus text exposition (samples and `# TYPE` families).
    static func exported(_ exposition: String) -> Set<String> {
        var names: Set<String> = []
        for line in exposition.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count >= 3 { names.insert(String(parts[2])) }
            } else if !line.hasPrefix("#") {
                names.insert(String(line.prefix { $0 != "{" && $0 != " " }))
            }
        }
        return names
    }

    /// The `expr:` values of a rule file: one-line ones, and the block (`expr: |`) lines indented
    /// deeper than their key.
    static func ruleExpressions(_ yaml: String) -> [String] {
        var result: [String] = []
        var blockIndent: Int?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == " " }.count
            if let key = blockIndent {
                if indent > key, !line.trimmingCharacters(in: .whitespaces).isEmpty {
                    result.append(String(line))
                    continue
                }
                blockIndent = nil
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("expr:") else { continue }
            let value = trimmed.dropFirst(5).trimmingCharacters(in: .whitespaces)
            if value == "|" || value == ">" { blockIndent = indent } else { result.append(value) }
        }
        return result
    }

    @Test func everyMetricTheDashboardAndTheAlertsNameIsExported() async throws {
        let root = TestEnvironment.packageRoot
        let dashboard = try String(contentsOf: root.appendingPathComponent("deploy/grafana/herald.json"), encoding: .utf8)
        let alerts = try String(contentsOf: root.appendingPathComponent("deploy/prometheus/alerts.yaml"), encoding: .utf8)
        // Only the expressions count (descriptions may mention other things).
        let dashboardJSON = try #require(try JSONSerialization.jsonObject(with: Data(dashboard.utf8)) as? [String: Any])
        let expressions = (dashboardJSON["panels"] as? [[String: Any]] ?? []).flatMap { panel in
            (panel["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }
        }
        let alertExpressions = Self.ruleExpressions(alerts).joined(separator: "\n")
        let named = Self.metricNames(in: expressions.joined(separator: "\n")).union(Self.metricNames(in: alertExpressions))
        #expect(named.count >= 15, "\(named.sorted())")
        for name in [
            "herald_queue_messages", "herald_publish_to_sent_seconds_bucket", "herald_messages_dead_lettered_total", "herald_store_errors_total",
            "herald_apns_certificate_expiry_timestamp_seconds", "herald_provider_credential_errors_total", "herald_circuit_state",
        ] {
            #expect(named.contains(name), "the dashboard or the alerts should use \(name)")
        }

        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1")])
            let (worker, base) = try await WorkerProcessEnvironment.startWithEndpoint(fixture)
            let client = try HTTPClient()
            try await waitUntil("the worker to consume", timeout: .seconds(30)) {
                try await client.execute(HTTPClientRequest(url: "\(base)/readyz")).status == 200
            }
            try await fixture.publish(Data("not an event".utf8))
            try await fixture.publish(TestEvents.xml(users: ["u1"], sequence: 1))
            var exposition = ""
            try await waitUntil("a delivery, a dead letter and the queue depths", timeout: .seconds(30)) {
                exposition = try await client.execute(HTTPClientRequest(url: "\(base)/metrics")).bodyText
                return exposition.contains("herald_messages_dead_lettered_total{code=\"undecodable\"} 1")
                    && exposition.contains("herald_deliveries_total{outcome=\"sent\"} 1") && exposition.contains("herald_queue_messages{")
            }
            let exported = Self.exported(exposition)
            let missing = named.subtracting(exported)
            #expect(missing.isEmpty, "named by the dashboard or the alerts, not exported: \(missing.sorted())")
            let mainQueueDepth = exposition.split(separator: "\n").first {
                $0.hasPrefix("herald_queue_messages{") && $0.contains(#"queue="\#(fixture.topology.queue)""#) && $0.contains(#"role="main""#)
            }
            #expect(mainQueueDepth != nil, "the main queue's depth, labelled with its name and role")
            // histogram_quantile never exceeds the largest finite bucket: the latency alert's
            // threshold must lie below it, or the alert cannot fire.
            let latencyRule = try #require(Self.ruleExpressions(alerts).first { $0.contains("herald_publish_to_sent_seconds_bucket") })
            let threshold = try #require(latencyRule.firstMatch(of: /\)\s*>\s*([0-9.]+)/).flatMap { Double($0.output.1) })
            let bounds = exposition.split(separator: "\n").filter { $0.hasPrefix("herald_publish_to_sent_seconds_bucket{") }
                .compactMap { line in line.firstMatch(of: /le="([0-9.]+)"/).flatMap { Double($0.output.1) } }
            #expect((bounds.max() ?? 0) > threshold, "the largest finite publish→sent bucket (\(bounds.max() ?? 0) s) must exceed the alert's \(threshold) s")

            await client.shutdown()
            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(timeout: .seconds(30)) == 0, "\(worker.stderr)")
        }
    }
}
