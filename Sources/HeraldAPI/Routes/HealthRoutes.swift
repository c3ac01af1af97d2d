import HeraldStore
import Hummingbird

/// `/healthz` (the process answers), `/readyz` (the database and the injected checks answer),
/// `/metrics` (Prometheus text). No authentication: keep them off the public listener in
/// production (docs/api.md "Operations").
struct HealthRoutes: Sendable {
    let store: Store
    let checks: [String: APIDependencies.ReadinessCheck]
    let metrics: (@Sendable () -> [UInt8])?

    struct Status: ResponseEncodable, Sendable {
        var status: String
        var checks: [String: String]?
    }

    func register(on router: Router<APIRequestContext>) {
        router.get("healthz") { _, _ in Status(status: "ok") }
        router.get("readyz") { _, _ in try await ready() }
        router.get("metrics") { _, _ in try metricsResponse() }
    }

    /// Runs the database check (`Store.checkHealth`: reachable, migrated) and every injected
    /// check, each within 2 seconds; 503 `not_ready` naming the failing ones.
    func ready() async throws(APIError) -> Status {
        var all = checks
        all["database"] = { [store] in try await store.checkHealth() }
        let results = await withTaskGroup(of: (String, Bool).self) { group in
            for (name, check) in all {
                group.addTask { (name, await Self.passes(check, within: .seconds(2))) }
            }
            var results: [String: Bool] = [:]
            for await (name, ok) in group { results[name] = ok }
            return results
        }
        let failing = results.filter { !$0.value }.keys.sorted()
        guard failing.isEmpty else {
            throw APIError(.notReady, "not ready: \(failing.joined(separator: ", ")) unavailable", retryAfterSeconds: 5)
        }
        return Status(status: "ready", checks: results.mapValues { _ in "ok" })
    }

    private static func passes(_ check: @escaping APIDependencies.ReadinessCheck, within limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await check()) != nil }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    func metricsResponse() throws(APIError) -> Response {
        guard let metrics else { throw APIError(.notFound, "metrics are not enabled") }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics()))
        )
    }
}
