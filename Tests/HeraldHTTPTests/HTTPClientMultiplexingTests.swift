import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Synchronization
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

    @Test("Requests beyond connections × streams wait in the client and all complete")
    func requestsBeyondCapacityWaitInTheClient() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            let configuration = trustingConfiguration(fixture) {
                $0.maxConnectionsPerHost = 1
                $0.maxConcurrentStreamsPerConnection = 8
            }
            try await withClient(configuration) { client in
                let url = "\(server.baseURL)/sleep?ms=20"
                let results = Mutex<[Int]>([])
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    let remaining = Atomic<Int>(60)
                    for _ in 0..<60 {
                        client.submit(HTTPClientRequest(url: url)) { result in
                            results.withLock { $0.append((try? result.get())?.status.code ?? -1) }
                            if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.resume() }
                        }
                    }
                }
                #expect(results.withLock { $0 }.count == 60)
                #expect(results.withLock { $0 }.allSatisfy { $0 == 200 })
                let ledger = server.ledger.snapshot()
                #expect(ledger.connectionCount == 1)
                #expect(ledger.maxConcurrentStreams <= 8, "the client handed libcurl more than the connection carries")
                #expect(ledger.maxConcurrentStreams >= 4, "the client did not use the streams it may")
                #expect(ledger.totalRequestsServed == 60)
                #expect(client.statistics.inFlight == 0)
            }
        }
    }

    @Test("Shutdown fails the requests still waiting in the client")
    func shutdownFailsWaitingRequests() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            let configuration = trustingConfiguration(fixture) {
                $0.maxConnectionsPerHost = 1
                $0.maxConcurrentStreamsPerConnection = 2
            }
            let client = try HTTPClient(configuration: configuration)
            let failures = Mutex<[HTTPClientError.Code]>([])
            let finished = Atomic<Int>(0)
            for _ in 0..<20 {
                client.submit(HTTPClientRequest(url: "\(server.baseURL)/sleep?ms=2000")) { result in
                    if case .failure(let error) = result { failures.withLock { $0.append(error.code) } }
                    finished.add(1, ordering: .relaxed)
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            await client.shutdown()
            #expect(finished.load(ordering: .relaxed) == 20)
            #expect(failures.withLock { $0 }.count == 20)
            #expect(failures.withLock { $0 }.allSatisfy { $0 == .shutdown })
        }
    }
}
