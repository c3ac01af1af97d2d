import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Hummingbird
import Metrics
import Prometheus
import Testing

@Suite("Health, readiness, metrics")
struct HealthRoutesTests {
    struct BrokerDown: Error {}

    @Test func healthAndReadiness() async throws {
        try await APIFixture.with(readinessChecks: ["broker": {}]) { api in
            let health = try await api.client.send(.get, "/healthz")
            #expect(health.status == 200)
            #expect(health.json["status"] as? String == "ok")
            let ready = try await api.client.send(.get, "/readyz")
            #expect(ready.status == 200)
            #expect(ready.json["checks"] as? [String: String] == ["broker": "ok", "database": "ok"])
            #expect(try await api.client.send(.get, "/metrics").errorCode == "not_found")
        }
    }

    @Test(.timeLimit(.minutes(1))) func readinessFailsForABrokenOrSlowCheck() async throws {
        let checks: [String: APIDependencies.ReadinessCheck] = [
            "broker": { throw BrokerDown() },
            "slow": { try await Task.sleep(for: .seconds(30)) },
        ]
        try await APIFixture.with(readinessChecks: checks) { api in
            let started = ContinuousClock.now
            let reply = try await api.client.send(.get, "/readyz")
            #expect(reply.status == 503)
            #expect(reply.errorCode == "not_ready")
            #expect(reply.json["ErrorDescription"] as? String == "not ready: broker, slow unavailable")
            #expect(ContinuousClock.now - started < .seconds(10))
        }
    }

    @Test func readinessFailsWithoutTheDatabase() async throws {
        try await APIFixture.with { api in
            await api.store.close()
            let reply = try await api.client.send(.get, "/readyz")
            #expect(reply.status == 503)
            #expect(reply.json["ErrorDescription"] as? String == "not ready: database unavailable")
            // A route that needs the store answers 503 too, without details.
            let settings = try await api.client.send(.get, "/v1/me/settings", token: try await TestTokens.token("u1"))
            #expect(settings.status == 503)
            #expect(settings.errorCode == "store_unavailable")
        }
    }

    @Test func metricsRendersTheRegistry() async throws {
        let registry = PrometheusCollectorRegistry()
        registry.makeCounter(descriptor: MetricNameDescriptor(metricName: "herald_test", unitName: "total", helpText: "A counter of the test.")).increment()
        try await APIFixture.with(metrics: { registry.emitToBuffer() }) { api in
            let reply = try await api.client.send(.get, "/metrics")
            #expect(reply.status == 200)
            #expect(reply.headers[.contentType]?.hasPrefix("text/plain") == true)
            #expect(reply.text.contains("herald_test_total 1"))
        }
    }
}
