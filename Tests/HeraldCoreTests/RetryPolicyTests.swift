import PropertyBased
import Testing

@testable import HeraldCore

@Suite struct RetryPolicyTests {
    @Test func backoffGrowsExponentiallyUpToTheCap() {
        let policy = RetryPolicy(initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(60), jitter: 0, maxAttempts: 100, maxElapsed: .seconds(100_000))
        #expect((1...8).map { policy.backoff(afterAttempts: $0) } == [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
        #expect(policy.backoff(afterAttempts: 10_000) == .seconds(60))
        var rng = SplitMix64(seed: 1)
        #expect(policy.decide(attempts: 3, elapsed: .zero, using: &rng) == .retry(after: .seconds(4)))
    }

    @Test func attemptsAndElapsedTimeAreBounded() {
        let policy = RetryPolicy(initialDelay: .seconds(10), jitter: 0, maxAttempts: 3, maxElapsed: .seconds(30))
        var rng = SplitMix64(seed: 1)
        #expect(policy.decide(attempts: 1, elapsed: .zero, using: &rng) == .retry(after: .seconds(10)))
        #expect(policy.decide(attempts: 2, elapsed: .seconds(10), using: &rng) == .retry(after: .seconds(20)))
        #expect(policy.decide(attempts: 2, elapsed: .seconds(11), using: &rng) == .giveUp(.deadlineExceeded))
        #expect(policy.decide(attempts: 3, elapsed: .zero, using: &rng) == .giveUp(.attemptsExhausted))
    }

    @Test func aProviderFaultSpendsTimeNotAttempts() {
        let policy = RetryPolicy(initialDelay: .seconds(1), maxDelay: .seconds(4), jitter: 0, maxAttempts: 3, maxElapsed: .seconds(60))
        var rng = SplitMix64(seed: 1)
        #expect(policy.decide(attempts: 3, elapsed: .seconds(10), using: &rng) == .giveUp(.attemptsExhausted))
        #expect(policy.decide(attempts: 20, elapsed: .seconds(10), providerFault: true, using: &rng) == .retry(after: .seconds(4)))
        #expect(policy.decide(attempts: 20, elapsed: .seconds(57), providerFault: true, using: &rng) == .giveUp(.deadlineExceeded))
    }

    @Test func retryAfterIsHonouredButNeverShortensTheBackoff() {
        let policy = RetryPolicy(initialDelay: .seconds(8), maxDelay: .seconds(60), jitter: 0, maxAttempts: 10, maxElapsed: .seconds(600))
        var rng = SplitMix64(seed: 1)
        #expect(policy.decide(attempts: 1, elapsed: .zero, retryAfter: .seconds(120), using: &rng) == .retry(after: .seconds(120)), "beyond maxDelay")
        #expect(policy.decide(attempts: 1, elapsed: .zero, retryAfter: .seconds(2), using: &rng) == .retry(after: .seconds(8)))
        #expect(policy.decide(attempts: 1, elapsed: .seconds(500), retryAfter: .seconds(120), using: &rng) == .giveUp(.deadlineExceeded))
    }

    @Test func jitterStaysWithinItsFraction() async {
        await propertyCheck(count: 300, input: Gen.int(in: 1...20), Gen.int(in: 0...Int.max)) { attempts, seed in
            let policy = RetryPolicy(
                initialDelay: .milliseconds(500), multiplier: 3, maxDelay: .seconds(300), jitter: 0.25, maxAttempts: 50, maxElapsed: .seconds(1_000_000))
            var rng = SplitMix64(seed: UInt64(seed))
            let base = policy.backoff(afterAttempts: attempts)
            guard case .retry(let delay) = policy.decide(attempts: attempts, elapsed: .zero, using: &rng) else {
                Issue.record("gave up")
                return
            }
            #expect(delay <= base)
            #expect(delay >= base * 0.75)
        }
    }

    @Test func valuesAreClampedAndTheDefaultIsSane() {
        let odd = RetryPolicy(multiplier: 0.5, jitter: 7, maxAttempts: 0)
        #expect(odd.multiplier == 1)
        #expect(odd.jitter == 1)
        #expect(odd.maxAttempts == 1)
        #expect(RetryPolicy.default.decide(attempts: 1, elapsed: .zero) != .giveUp(.attemptsExhausted))
    }

    @Test func outcomesKnowWhetherTheyAreTerminal() {
        #expect(DeliveryOutcome.sent.isTerminal)
        #expect(DeliveryOutcome.tokenDead(reason: "Unregistered").isTerminal)
        #expect(DeliveryOutcome.permanentFailure(reason: "PayloadTooLarge").isTerminal)
        #expect(!DeliveryOutcome.retryAfter(.seconds(5), reason: "TooManyRequests").isTerminal)
        #expect(DeliveryOutcome.retryAfter(nil, reason: "503").description == "retry after backoff: 503")
    }
}
