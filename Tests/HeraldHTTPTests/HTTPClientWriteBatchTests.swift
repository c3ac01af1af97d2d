import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Synchronization
import Testing

/// The driver holds a TLS connection's writes until its pass ends (TLSWriteBatch): what goes out
/// must be the same, in fewer socket writes.
@Suite struct HTTPClientWriteBatchTests {
    @Test("Many requests at once leave in far fewer socket writes than requests, and all complete")
    func requestsShareSocketWrites() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture) { $0.maxConnectionsPerHost = 1 }) { client in
                // The first answer on the connection turns batching on for it.
                let status1 = try await hello(client, server)
                #expect(status1 == 200)
                #expect(client.statistics.connectionsBatched == 1)
                let before = client.statistics.batchedWrites
                let count = 100
                let bodies = Mutex<[Int: String]>([:])
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    let remaining = Atomic<Int>(count)
                    for index in 0..<count {
                        // HEADERS and DATA each: 200 records, 200 writes without batching.
                        let request = HTTPClientRequest(method: .post, url: "\(server.baseURL)/echo", body: Array("body \(index)".utf8))
                        client.submit(request) { result in
                            bodies.withLock { $0[index] = (try? result.get())?.bodyText }
                            if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.resume() }
                        }
                    }
                }
                let answered = bodies.withLock { $0 }
                #expect(answered.count == count)
                #expect((0..<count).allSatisfy { answered[$0] == "body \($0)" })
                let writes = client.statistics.batchedWrites - before
                #expect(writes >= 1)
                #expect(writes < count, "\(writes) socket writes for \(count) requests")
                #expect(server.ledger.snapshot().connectionCount == 1)
            }
        }
    }

    @Test("A body larger than a batch holds goes out whole on a batched connection")
    func largeBodyOnBatchedConnection() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                let status2 = try await hello(client, server)
                #expect(status2 == 200)
                #expect(client.statistics.connectionsBatched == 1)
                let upload = try await client.execute(HTTPClientRequest(method: .post, url: "\(server.baseURL)/echo", body: TestRoutes.bigBody))
                #expect(upload.body == TestRoutes.bigBody)
                let download = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/big"))
                #expect(download.body == TestRoutes.bigBody)
            }
        }
    }

    @Test("After a batched connection closes, the next one (often on the same socket number) works")
    func closedConnectionIsReplaced() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withClient(trustingConfiguration(fixture) { $0.maxConnectionsPerHost = 1 }) { client in
            for round in 1...3 {
                // A new server each round: its connection replaces the last, which closed with it.
                try await withServer(tls: fixture) { server in
                    for _ in 0..<3 {
                        let response = try await client.execute(HTTPClientRequest(method: .post, url: "\(server.baseURL)/echo", body: Array("r\(round)".utf8)))
                        #expect(response.bodyText == "r\(round)")
                    }
                }
                #expect(client.statistics.connectionsBatched == round)
            }
        }
    }

    @Test("Prior-knowledge HTTP/2 without TLS is not batched")
    func cleartextIsNotBatched() async throws {
        try await withServer(tls: nil) { server in
            try await withClient(HTTPClientConfiguration(httpVersion: .http2PriorKnowledge)) { client in
                let status3 = try await hello(client, server)
                #expect(status3 == 200)
                let status4 = try await hello(client, server)
                #expect(status4 == 200)
                #expect(client.statistics.connectionsBatched == 0)
            }
        }
    }

    private func hello(_ client: HTTPClient, _ server: HTTP2Server) async throws -> Int {
        try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello")).status.code
    }
}
