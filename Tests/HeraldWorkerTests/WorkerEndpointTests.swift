import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldTesting
import Testing

/// `herald worker` with `worker.metrics_listen`: the probes an orchestrator uses and the
/// scrape Prometheus uses, on a worker process without the REST API.
@Suite("Worker endpoint", .timeLimit(.minutes(2)))
struct WorkerEndpointTests {
    @Test func aWorkerServesMetricsHealthAndReadiness() async throws {
        try await WorkerFixture.with { fixture in
            let (worker, base) = try await WorkerProcessEnvironment.startWithEndpoint(fixture)
            let client = try HTTPClient()
            #expect(try await client.execute(HTTPClientRequest(url: "\(base)/healthz")).status == 200)
            try await waitUntil("the worker to consume", timeout: .seconds(30)) {
                try await client.execute(HTTPClientRequest(url: "\(base)/readyz")).status == 200
            }
            #expect(try await client.execute(HTTPClientRequest(url: "\(base)/readyz")).bodyText.contains(#""worker":"ok""#))

            try await fixture.publish(Data("not an event".utf8))
            try await waitUntil("the dead letter to be counted", timeout: .seconds(30)) {
                let metrics = try await client.execute(HTTPClientRequest(url: "\(base)/metrics")).bodyText
                return metrics.contains("herald_messages_dead_lettered_total{code=\"undecodable\"} 1")
            }
            #expect(try await client.execute(HTTPClientRequest(url: "\(base)/v1/me/settings")).status == 404, "only the operations routes")
            await client.shutdown()
            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(timeout: .seconds(30)) == 0, "\(worker.stderr)")
        }
    }
}
