import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

@Suite struct ResponseDelayTests {
    /// With a response delay every push is answered no sooner than the delay, accepted or not;
    /// admin routes answer at once; the delay can be changed while running.
    @Test func pushesAreAnsweredAfterTheDelay() async throws {
        try await SandboxFixture.with(responseDelay: .milliseconds(300)) { fixture in
            let clock = ContinuousClock()
            #expect(fixture.sandbox.responseDelay == .milliseconds(300))
            let started = clock.now
            let accepted = try await fixture.apns()
            #expect(accepted.status == 200)
            #expect(clock.now - started >= .milliseconds(300))

            let refusedAt = clock.now
            let refused = try await fixture.apns(device: "not-hex")
            #expect(refused.status == 400)
            #expect(clock.now - refusedAt >= .milliseconds(300))

            let fcmAt = clock.now
            let fcm = try await fixture.fcm(json: SandboxFixture.message(), accessToken: try await fixture.accessToken())
            #expect(fcm.status == 200)
            #expect(clock.now - fcmAt >= .milliseconds(300))

            let put = try await fixture.client.execute(
                HTTPClientRequest(method: .put, url: fixture.sandbox.apnsURL + "/_sandbox/response-delay", body: Array(#"{"delay_ms": 0}"#.utf8))
            )
            #expect(put.status == 204)
            #expect(fixture.sandbox.responseDelay == .zero)
            let stats = try await fixture.client.execute(HTTPClientRequest(url: fixture.sandbox.apnsURL + "/_sandbox/stats"))
            #expect(jsonObject(stats)?["response_delay_ms"] as? Double == 0)

            let bad = try await fixture.client.execute(
                HTTPClientRequest(method: .put, url: fixture.sandbox.apnsURL + "/_sandbox/response-delay", body: Array(#"{"delay_ms": -1}"#.utf8))
            )
            #expect(bad.status == 400)
        }
    }

    /// Delayed answers wait on timers, not on one another: 200 pushes sent at once, each
    /// answered after 500 ms, are all in flight together on one connection.
    @Test func delayedAnswersOverlap() async throws {
        try await SandboxFixture.with(responseDelay: .milliseconds(500)) { fixture in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for n in 0..<200 {
                    let device = String(format: "%064x", n + 1)
                    group.addTask { try await fixture.apns(device: device).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == .ok })
            #expect(fixture.sandbox.apnsConnections.maxConcurrentStreams >= 100)
            #expect(fixture.sandbox.pushes.count == 200)
        }
    }
}
