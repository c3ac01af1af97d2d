import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import HeraldTesting
import Testing

@Suite("HTTPClient through a proxy", .timeLimit(.minutes(1)))
struct HTTPClientProxyTests {
    static let credentials = ConnectProxy.Credentials(user: "herald", password: "P@ss w0rd:ü")

    @Test("With user and password, requests tunnel through the CONNECT proxy")
    func authenticatedTunnel() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        let proxy = try await ConnectProxy.start(credentials: Self.credentials)
        do {
            try await withServer(tls: fixture) { server in
                let configuration = trustingConfiguration(fixture) {
                    $0.proxy = .init(url: proxy.url, user: Self.credentials.user, password: Self.credentials.password)
                    $0.maxConnectionsPerHost = 1
                }
                try await withClient(configuration) { client in
                    try await withThrowingTaskGroup(of: HTTPClientResponse.self) { group in
                        for _ in 0..<50 {
                            group.addTask { try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello")) }
                        }
                        for try await response in group {
                            #expect(response.status == 200)
                            #expect(response.version == .http2)
                            #expect(response.bodyText == "hello")
                        }
                    }
                }
                let statistics = proxy.statistics
                #expect(statistics.tunnelsOpened == 1)
                #expect(statistics.authenticatedRequests == 1)
                #expect(statistics.rejectedRequests == 0)
                #expect(statistics.targets == ["localhost:\(server.port)"])
                #expect(server.ledger.snapshot().totalRequestsServed == 50)
            }
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }

    @Test("Wrong proxy credentials fail with .proxyFailure carrying the 407")
    func wrongCredentials() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        let proxy = try await ConnectProxy.start(credentials: Self.credentials)
        do {
            try await withServer(tls: fixture) { server in
                let configuration = trustingConfiguration(fixture) {
                    $0.proxy = .init(url: proxy.url, user: Self.credentials.user, password: "wrong")
                }
                try await withClient(configuration) { client in
                    let error = await expectHTTPError(.proxyFailure) {
                        _ = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                    }
                    #expect(error?.proxyStatus == 407)
                    #expect(error.map { !"\($0)".contains("wrong") } ?? false, "the description must not show the password")
                }
                let statistics = proxy.statistics
                #expect(statistics.rejectedRequests >= 1)
                #expect(statistics.authenticationAttempts >= 1)
                #expect(statistics.tunnelsOpened == 0)
                #expect(server.ledger.snapshot().connectionCount == 0)
            }
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }

    @Test("Without credentials an authenticating proxy answers 407")
    func missingCredentials() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        let proxy = try await ConnectProxy.start(credentials: Self.credentials)
        do {
            try await withServer(tls: fixture) { server in
                try await withClient(trustingConfiguration(fixture) { $0.proxy = .init(url: proxy.url) }) { client in
                    let error = await expectHTTPError(.proxyFailure) {
                        _ = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                    }
                    #expect(error?.proxyStatus == 407)
                }
                #expect(proxy.statistics.authenticationAttempts == 0)
                #expect(proxy.statistics.rejectedRequests >= 1)
            }
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }

    @Test("Hosts in the no-proxy list are reached directly")
    func noProxyList() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        let proxy = try await ConnectProxy.start()
        do {
            try await withServer(tls: fixture) { server in
                let configuration = trustingConfiguration(fixture) {
                    $0.proxy = .init(url: proxy.url, noProxy: ["localhost"])
                }
                try await withClient(configuration) { client in
                    let status = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello")).status
                    #expect(status == 200)
                }
                #expect(proxy.statistics.connectRequests == 0)
                #expect(server.ledger.snapshot().totalRequestsServed == 1)
            }
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }

    @Test("A proxy that is not listening fails the request, not the client")
    func proxyDown() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        let proxy = try await ConnectProxy.start()
        let deadURL = proxy.url
        await proxy.shutdown()
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture) { $0.proxy = .init(url: deadURL) }) { client in
                do {
                    _ = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                    Issue.record("expected a failure")
                } catch let error as HTTPClientError {
                    #expect([.couldNotConnect, .proxyFailure].contains(error.code), "\(error.debugDescription)")
                }
            }
        }
    }
}
