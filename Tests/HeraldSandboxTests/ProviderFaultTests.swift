import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

/// Provider-wide faults set through the admin endpoint (the fault campaign's outages): one
/// provider fails, the other does not; a share fails; slow answers; clearing.
@Suite struct ProviderFaultTests {
    func admin(_ fixture: SandboxFixture, _ method: HTTPRequest.Method, _ path: String, _ body: String = "") async throws -> HTTPClientResponse {
        try await fixture.client.execute(HTTPClientRequest(method: method, url: fixture.sandbox.apnsURL + "/_sandbox/" + path, body: Array(body.utf8)))
    }

    @Test func anOutageOfOneProviderLeavesTheOtherAlone() async throws {
        try await SandboxFixture.with { fixture in
            #expect(try await admin(fixture, .put, "apns/outage", #"{"status": 503}"#).status == 204)
            let failed = try await fixture.apns()
            #expect(failed.status.code == 503)
            #expect(reason(failed) == "ServiceUnavailable")
            let fcm = try await fixture.fcm(json: SandboxFixture.message(), accessToken: try await fixture.accessToken())
            #expect(fcm.status == .ok)
            #expect(fixture.sandbox.pushes.count == 1)

            #expect(try await admin(fixture, .put, "apns/outage", #"{"status": 500, "fraction": 1}"#).status == 204)
            let serverError = try await fixture.apns()
            #expect(serverError.status.code == 500)
            #expect(reason(serverError) == "InternalServerError")

            #expect(try await admin(fixture, .put, "fcm/outage", #"{"status": 503}"#).status == 204)
            let google = try await fixture.fcm(json: SandboxFixture.message(), accessToken: try await fixture.accessToken())
            #expect(google.status.code == 503)
            #expect(googleError(google).status == "UNAVAILABLE")

            let stats = jsonObject(try await admin(fixture, .get, "stats"))
            let faults = stats?["faults"] as? [String: Any]
            #expect((faults?["apns"] as? [String: Any])?["failed_pushes"] as? Int == 2)
            #expect(((faults?["fcm"] as? [String: Any])?["fault"] as? [String: Any])?["status"] as? Int == 503)

            #expect(try await admin(fixture, .delete, "apns/outage").status == 204)
            #expect(try await admin(fixture, .delete, "fcm/outage").status == 204)
            #expect(try await fixture.apns().status == .ok)
            #expect(fixture.sandbox.fault(of: .apns) == nil)
            #expect(fixture.sandbox.pushes.count == 2)
        }
    }

    /// `fraction` 0.5 fails about half the pushes (400 pushes: 200 ± a wide margin).
    @Test func aFractionFailsAboutThatShare() async throws {
        try await SandboxFixture.with { fixture in
            #expect(try await admin(fixture, .put, "apns/outage", #"{"status": 503, "fraction": 0.5}"#).status == 204)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<400 {
                    let device = String(format: "%064x", n + 1)
                    group.addTask { try await fixture.apns(device: device).status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let failed = statuses.filter { $0 == 503 }.count
            #expect(statuses.allSatisfy { $0 == 200 || $0 == 503 })
            #expect((120...280).contains(failed))
            #expect(fixture.sandbox.pushes.count == 400 - failed)
        }
    }

    @Test func slowAnswersAndBadFaults() async throws {
        try await SandboxFixture.with { fixture in
            // Warm up APNs (connection, provider token) so that its timing below is the answer's only.
            #expect(try await fixture.apns().status == .ok)
            #expect(try await admin(fixture, .put, "fcm/outage", #"{"status": 0, "delay_ms": 400}"#).status == 204)
            let clock = ContinuousClock()
            let started = clock.now
            let slow = try await fixture.fcm(json: SandboxFixture.message(), accessToken: try await fixture.accessToken())
            #expect(slow.status == .ok)
            #expect(clock.now - started >= .milliseconds(400))
            let apnsAt = clock.now
            #expect(try await fixture.apns().status == .ok)
            #expect(clock.now - apnsAt < .milliseconds(400))

            for bad in [#"{"status": 404}"#, #"{"status": 503, "fraction": 2}"#, #"{"delay_ms": -1}"#, "not json"] {
                #expect(try await admin(fixture, .put, "apns/outage", bad).status.code == 400)
            }
            #expect(fixture.sandbox.fault(of: .apns) == nil)
        }
    }
}
