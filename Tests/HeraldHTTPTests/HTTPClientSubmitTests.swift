import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Synchronization
import Testing

@Suite("HTTPClient.submit: requests without a task each", .timeLimit(.minutes(1)))
struct HTTPClientSubmitTests {
    /// Every submitted request completes exactly once, with its own response, and the client's
    /// counters agree.
    @Test func everyRequestCompletesOnce() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                let results = Mutex<[Int: [HTTPResponse.Status]]>([:])
                let count = 300
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    for n in 0..<count {
                        let request = HTTPClientRequest(url: "\(server.baseURL)/status/\(200 + n % 3)")
                        client.submit(request) { result in
                            let finished = results.withLock { results -> Bool in
                                results[n, default: []].append((try? result.get().status) ?? 599)
                                return results.count == count
                            }
                            if finished { done.resume() }
                        }
                    }
                }
                let seen = results.withLock { $0 }
                #expect(seen.count == count)
                #expect(seen.allSatisfy { n, statuses in statuses == [HTTPResponse.Status(code: 200 + n % 3)] })
                #expect(client.statistics.requestsCompleted == count)
                #expect(client.statistics.inFlight == 0)
            }
        }
    }

    /// A request refused before it is queued completes at once, on the caller's thread.
    @Test func refusedRequestsCompleteAtOnce() async throws {
        let client = try HTTPClient()
        let invalid = Mutex<HTTPClientError?>(nil)
        client.submit(HTTPClientRequest(url: "https://localhost/a b")) { result in
            if case .failure(let error) = result { invalid.withLock { $0 = error } }
        }
        #expect(invalid.withLock { $0?.code } == .invalidRequest)

        await client.shutdown()
        let afterShutdown = Mutex<HTTPClientError?>(nil)
        client.submit(HTTPClientRequest(url: "https://localhost/")) { result in
            if case .failure(let error) = result { afterShutdown.withLock { $0 = error } }
        }
        #expect(afterShutdown.withLock { $0?.code } == .shutdown)
        #expect(client.statistics.requestsFailed == 2)
    }
}
