import Foundation
import HeraldHTTP
import HeraldSandbox
import Testing

/// `HTTPClientResponse.answerTime` is the server's time on the wire: what the worker's circuit
/// breaker judges a provider's speed by.
@Suite("HTTPClient answer time", .timeLimit(.minutes(1)))
struct HTTPClientAnswerTimeTests {
    @Test("a server that takes 300 ms answers in about 300 ms")
    func answerTimeIsTheServers() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                let started = ContinuousClock.now
                let response = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/sleep?ms=300"))
                let elapsed = ContinuousClock.now - started
                let answerTime = try #require(response.answerTime)
                #expect(answerTime >= .milliseconds(300), "\(answerTime)")
                #expect(answerTime <= elapsed, "answer time \(answerTime) longer than the call \(elapsed)")
            }
        }
    }
}
