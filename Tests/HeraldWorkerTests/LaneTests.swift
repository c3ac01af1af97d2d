import Foundation
import HeraldCore
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Lanes bound the deliveries being sent, not the users waiting for a retry.
@Suite("Lanes", .timeLimit(.minutes(2)))
struct LaneTests {
    /// With 4 lanes and the provider refusing every request of eight users (their iPhones, 503
    /// each time), the other users' pushes (their Android phones) still go out at once; the
    /// refused ones go, each user's in order, once the provider answers again.
    @Test func aProviderRefusingOneGroupLeavesTheLanesToTheOthers() async throws {
        try await WorkerFixture.with { fixture in
            let refused = (0..<8).map { "refused-\($0)" }, served = (0..<8).map { "served-\($0)" }
            try await fixture.store.devices.importDevices(
                refused.enumerated().map { TestEvents.device("iphone-\($0.offset)", user: $0.element, platform: .ios, token: TestEvents.apnsToken($0.offset)) }
                    + served.enumerated().map { TestEvents.device("pixel-\($0.offset)", user: $0.element, platform: .android) }
            )
            let sender = RecordingSender()
            for n in refused.indices { sender.script(.failFirst(Int.max, retryAfter: nil), token: TestEvents.apnsToken(n)) }
            var configuration = fixture.configuration(lanes: 4)
            configuration.retryPolicy = RetryPolicy(
                initialDelay: .milliseconds(200), maxDelay: .milliseconds(500), jitter: 0, maxAttempts: 10_000, maxElapsed: .seconds(600))

            try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                // The refused users' events come first: if a delivery waiting for its retry kept
                // its lane, four of them would hold every lane.
                var sequence = 0
                var bodies: [Data] = []
                for round in 0..<2 {
                    for user in refused + served {
                        sequence += 1
                        bodies.append(TestEvents.xml(users: [user], parameters: ["\(round)", "RUB"], sequence: sequence))
                    }
                }
                try await fixture.publish(bodies)
                try await waitUntil("every Android push", timeout: .seconds(15)) { sender.sent.filter { $0.platform == .android }.count == 16 }
                #expect(sender.sent.allSatisfy { $0.platform == .android })
                try await waitUntil("every refused user retried", timeout: .seconds(15)) {
                    refused.indices.allSatisfy { sender.attempts(token: TestEvents.apnsToken($0)) >= 2 }
                }
                #expect(worker.statistics.retries >= refused.count)

                // The provider answers again: the parked deliveries go, and each user's second
                // event after its first.
                for n in refused.indices { sender.script(nil, token: TestEvents.apnsToken(n)) }
                try await waitUntil("every iPhone push", timeout: .seconds(20)) { sender.sent.filter { $0.platform == .ios }.count == 16 }
                try await waitUntil("every message acknowledged", timeout: .seconds(20)) { worker.statistics.acked == 32 }
            }
            for user in refused {
                let rounds = sender.sent.filter { $0.userId == user }.compactMap(OrderingTests.sequence)
                #expect(rounds == [0, 1], "\(user)'s pushes in publish order")
            }
        }
    }
}
