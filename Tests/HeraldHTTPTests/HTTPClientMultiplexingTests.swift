import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

@Suite("HTTPClient multiplexing", .timeLimit(.minutes(2)))
struct HTTPClientMultiplexingTests {
    @Test("1,000 concurrent requests complete over one HTTP/2 connection")
    func thousandRequestsOneConnection() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            let configuration = trustingConfiguration(fixture) { $0.maxConnectionsPerHost = 1 }
            try await withClient(configuration) { client in
                let url = "\(server.baseURL)/hello"
                let clock = ContinuousClock()
                let started = clock.now
                let statuses = try await withThrowingTaskGroup(of: (Int, HTTPClientResponse.Version).self) { group in
                    for _ in 0..<1000 {
                        group.addTask {
                            let response = try await client.execute(HTTPClientRequest(url: url))
                            return (response.status.code, response.version)
                        }
                    }
                    var results: [(Int, HTTPClientResponse.Version)] = []
                    for try await result in group { results.append(result) }
                    return results
                }
                let elapsed = clock.now - started
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                print("1,000 requests over one HTTP/2 connection: \(elapsed), \(Int(1000 / seconds)) req/s")

                #expect(statuses.count == 1000)
                #expect(statuses.allSatisfy { $0.0 == 200 && $0.1 == .http2 })
                let ledger = server.ledger.snapshot()
                #expect(ledger.connectionCount == 1)
                #expect(ledger.totalRequestsServed == 1000)
                #expect(ledger.connections.first?.applicationProtocol == "h2")
                #expect(ledger.maxConcurrentStreams > 1, "requests were not multiplexed")
                let statistics = client.statistics
                #expect(statistics.connectionsOpened == 1)
                #expect(statistics.requestsCompleted == 1000)
                #expect(statistics.requestsFailed == 0)
                #expect(statistics.inFlight == 0)
            }
        }
    }

    @Test("One connection carries at least 100 concurrent streams")
    func concurrentStreams() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            let configuration = trustingConfiguration(fixture) {
                $0.maxConnectionsPerHost = 1
                $0.maxConcurrentStreamsPerConnection = 200
            }
            try await withClient(configuration) { client in
                let url = "\(server.baseURL)/sleep?ms=300"
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<200 {
                        group.addTask { try await client.execute(HTTPClientRequest(url: url)).status.code }
                    }
                    for try await status in group { #expect(status == 200) }
                }
                let ledger = server.ledger.snapshot()
                print("peak concurrent streams on one connection: \(ledger.maxConcurrentStreams)")
                #expect(ledger.connectionCount == 1)
                #expect(ledger.maxConcurrentStreams >= 100)
                #expect(ledger.totalRequestsServed == 200)
            }
        }
    }

    @Test("The server's stream limit caps the client's streams per connection")
    func serverStreamLimit() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture, maxConcurrentStreams: 10) { server in
            let configuration = trustingConfiguration(fixture) { $0.maxConnectionsPerHost = 1 }
            try await withClient(configuration) { client in
                // Streams opened before the server's SETTINGS arrive are not limited by them, so
                // let one request establish the connection first.
                let first = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                #expect(first.status == 200)
                let url = "\(server.baseURL)/sleep?ms=50"
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<50 {
                        group.addTask { try await client.execute(HTTPClientRequest(url: url)).status.code }
                    }
                    for try await status in group { #expect(status == 200) }
                }
                let ledger = server.ledger.snapshot()
                #expect(ledger.connectionCount == 1)
                #expect(ledger.maxConcurrentStreams <= 10)
                #expect(ledger.maxConcurrentStreams >= 5, "the client did not use the streams it may")
                #expect(ledger.totalRequestsServed == 51)
            }
        }
    }
}
