import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

@Suite("HTTPClient cancellation and shutdown", .timeLimit(.minutes(1)))
struct HTTPClientLifecycleTests {
    @Test("Cancelling a task mid-request throws CancellationError and resets its stream")
    func cancellation() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        let arrivals = ArrivalCounter()
        try await withServer(tls: fixture, handler: TestRoutes.handler(arrivals: arrivals)) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                #expect(try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello")).status == 200)
                let task = Task {
                    try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/sleep?ms=20000"))
                }
                #expect(await eventually { arrivals.value == 2 }, "the request never reached the server")
                #expect(server.ledger.snapshot().connections.first?.openStreams == 1)

                let clock = ContinuousClock()
                let cancelledAt = clock.now
                task.cancel()
                let result = await task.result
                #expect(clock.now - cancelledAt < .seconds(1))
                #expect(throws: CancellationError.self) { try result.get() }

                #expect(client.statistics.inFlight == 0)
                #expect(client.statistics.requestsFailed == 1)

                // The connection is still good for more work, and by the time it has carried
                // another request the cancelled stream is reset (libcurl 7.88 queues the
                // RST_STREAM it submits on removal and sends it with the connection's next write).
                let response = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                #expect(response.status == 200)
                #expect(await eventually { server.ledger.snapshot().connections.first?.openStreams == 0 }, "the cancelled stream was never reset")
                #expect(server.ledger.snapshot().connectionCount == 1)
            }
        }
    }

    @Test("A task cancelled before it sends never reaches the server")
    func cancelledBeforeSending() async throws {
        let arrivals = ArrivalCounter()
        try await withServer(tls: nil, handler: TestRoutes.handler(arrivals: arrivals)) { server in
            try await withClient(HTTPClientConfiguration(httpVersion: .http2PriorKnowledge)) { client in
                let task = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                }
                await #expect(throws: CancellationError.self) { try await task.value }
                try await Task.sleep(for: .milliseconds(100))
                #expect(arrivals.value == 0)
                #expect(client.statistics.inFlight == 0)
            }
        }
    }

    @Test("Shutdown fails requests in flight with .shutdown, later requests too; it is idempotent")
    func shutdownInFlight() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        let arrivals = ArrivalCounter()
        try await withServer(tls: fixture, handler: TestRoutes.handler(arrivals: arrivals)) { server in
            let client = try HTTPClient(configuration: trustingConfiguration(fixture))
            let tasks = (0..<5).map { _ in
                Task { try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/sleep?ms=20000")) }
            }
            #expect(await eventually { arrivals.value == 5 })

            let clock = ContinuousClock()
            let started = clock.now
            await client.shutdown()
            #expect(clock.now - started < .seconds(2))
            for task in tasks {
                let result = await task.result
                #expect {
                    try result.get()
                } throws: { error in
                    (error as? HTTPClientError)?.code == .shutdown
                }
            }
            await expectHTTPError(.shutdown) {
                _ = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
            }
            await client.shutdown()  // idempotent
            #expect(client.statistics.inFlight == 0)
            #expect(await eventually { server.ledger.snapshot().openConnectionCount == 0 }, "the client's connection stayed open")
        }
    }

    @Test("After the server drops the connection, the next request opens a new one")
    func reconnect() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                let before = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                #expect(before.status == 200)
                await server.closeAllConnections()
                #expect(await eventually { server.ledger.snapshot().openConnectionCount == 0 })
                let after = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                #expect(after.status == 200)
                #expect(after.headerFields["x-connection"] == "2")
                #expect(client.statistics.connectionsOpened == 2)
                #expect(server.ledger.snapshot().connectionCount == 2)
            }
        }
    }

    @Test("Dropping a client without shutdown stops its driver")
    func dropWithoutShutdown() async throws {
        try await withServer(tls: nil) { server in
            do {
                let client = try HTTPClient(configuration: HTTPClientConfiguration(httpVersion: .http2PriorKnowledge))
                #expect(try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello")).status == 200)
            }
            #expect(await eventually { server.ledger.snapshot().openConnectionCount == 0 }, "the dropped client kept its connection")
        }
    }
}
