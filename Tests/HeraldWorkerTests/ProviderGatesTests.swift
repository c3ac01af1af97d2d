import Foundation
import HeraldCore
import Testing

@testable import HeraldWorker

/// The slow-answer rule of the engine's circuit breakers (``ProviderGates``), in process: a
/// provider is judged by the time its answers take on the wire, never by how late the engine
/// gets to them.
@Suite("Provider gates")
struct ProviderGatesTests {
    private let key = ProviderGates.Key(
        Recipient(
            subscription: Subscription(deviceId: "d", token: "t", platform: .ios, userId: "u", culture: "ru-RU", deviceRef: 1),
            addressedUserId: "u"))
    private let policy = CircuitBreaker.Policy(minimumFailures: 10, slowAnswer: .seconds(1))

    /// Feeds `count` sent answers that took `wire` at the provider, each taken by the engine
    /// `engineDelay` after it was sent; returns the changes they caused.
    private func answer(
        _ count: Int, wire: Duration?, engineDelay: Duration, into gates: inout ProviderGates, from start: ContinuousClock.Instant
    ) -> [ProviderGates.Change] {
        (0..<count).compactMap { index in
            let now = start + .milliseconds(10 * index) + engineDelay
            return gates.record(.sent, slow: gates.isSlow(answerTime: wire), for: key, probe: false, now: now)
        }
    }

    /// A saturated engine takes each answer 3 s after its send: the provider answered in 2 ms,
    /// so its breaker never opens.
    @Test func answersTheEngineTakesLateDoNotOpenAFastProvidersBreaker() {
        var gates = ProviderGates(policy: policy)
        let changes = answer(1_000, wire: .milliseconds(2), engineDelay: .seconds(3), into: &gates, from: .now)
        #expect(changes.isEmpty)
        #expect(!gates.isBlocked(key) && !gates.isWatching)
    }

    /// Answers that take 1.5 s on the wire are faults: the breaker opens at the tenth, for being
    /// slow, and holds the provider's deliveries.
    @Test func answersSlowOnTheWireOpenTheBreaker() throws {
        var gates = ProviderGates(policy: policy)
        let changes = answer(10, wire: .milliseconds(1_500), engineDelay: .zero, into: &gates, from: .now)
        let change = try #require(changes.first)
        guard case .opened(let opened, _, let reason) = change else {
            Issue.record("expected the breaker to open, got \(change)")
            return
        }
        #expect(changes.count == 1 && opened == key)
        #expect(reason.contains("slower than"))
        #expect(gates.isBlocked(key))
    }

    /// No answer time (nothing reached the provider), or the rule off: never slow.
    @Test func withoutAnAnswerTimeOrTheRuleOffNothingIsSlow() {
        #expect(!ProviderGates(policy: policy).isSlow(answerTime: nil))
        #expect(ProviderGates(policy: policy).isSlow(answerTime: .seconds(2)))
        #expect(!ProviderGates(policy: CircuitBreaker.Policy(minimumFailures: 10, slowAnswer: nil)).isSlow(answerTime: .seconds(2)))
        #expect(!ProviderGates(policy: .disabled).isSlow(answerTime: .seconds(2)))
    }
}
