import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

@Suite("HTTPClient timeouts", .timeLimit(.minutes(1)))
struct HTTPClientTimeoutTests {
    @Test("A request slower than its timeout throws .timeout; the client keeps working")
    func requestTimeout() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                // Warm the connection so the timeout measures the request, not the handshake.
                let status = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello")).status
                #expect(status == 200)

                let clock = ContinuousClock()
                let started = clock.now
                let error = await expectHTTPError(.timeout) {
                    _ = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/sleep?ms=10000", timeout: .milliseconds(300)))
                }
                let elapsed = clock.now - started
                #expect(elapsed >= .milliseconds(250))
                #expect(elapsed < .seconds(3), "timeout took \(elapsed)")
                #expect(error?.curlCode == 28)

                // Other requests on the same client still succeed, concurrently too.
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<20 {
                        group.addTask { try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello")).status.code }
                    }
                    for try await status in group { #expect(status == 200) }
                }
                #expect(client.statistics.requestsFailed == 1)
                #expect(client.statistics.inFlight == 0)
            }
        }
    }

    @Test("The configured default request timeout applies when a request sets none")
    func defaultTimeout() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture) { $0.requestTimeout = .milliseconds(400) }) { client in
                await expectHTTPError(.timeout) {
                    _ = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/sleep?ms=10000"))
                }
                // A request's own timeout overrides the default (generous here: the suite may be
                // running everything at once on two cores).
                let status = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/sleep?ms=10", timeout: .seconds(20))).status
                #expect(status == 200)
            }
        }
    }

    @Test("Connecting to a closed port fails with .couldNotConnect")
    func connectionRefused() async throws {
        // Bind and close a server to find a port nobody listens on.
        let server = try await HTTP2Server.start(configuration: HTTP2ServerConfiguration(tls: nil), handler: TestRoutes.handler())
        let port = server.port
        await server.shutdown()
        try await withClient(HTTPClientConfiguration(httpVersion: .http2PriorKnowledge)) { client in
            await expectHTTPError(.couldNotConnect) {
                _ = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/hello"))
            }
        }
    }

    @Test("An unresolvable host fails with .couldNotResolve")
    func unresolvableHost() async throws {
        try await withClient(HTTPClientConfiguration(connectTimeout: .seconds(5))) { client in
            await expectHTTPError(.couldNotResolve) {
                _ = try await client.execute(HTTPClientRequest(url: "https://herald-no-such-host.invalid/"))
            }
        }
    }
}
