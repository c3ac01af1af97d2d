import HeraldCore
import Testing

@Suite("Circuit breaker")
struct CircuitBreakerTests {
    let start = ContinuousClock.now
    let policy = CircuitBreaker.Policy(minimumFailures: 4, failureRatio: 0.5, window: .seconds(10), initialOpen: .seconds(5), maximumOpen: .seconds(12))

    @Test func opensAfterEnoughFaultsThatAreMostOfTheAnswers() {
        var breaker = CircuitBreaker(policy: policy)
        var changes: [Bool] = []
        for n in 0..<4 { changes.append(breaker.record(providerFault: true, probe: false, now: start + .milliseconds(n))) }
        #expect(changes == [false, false, false, true])
        let verdict = breaker.verdict(now: start + .seconds(1))
        #expect(verdict == .reject)
        #expect(breaker.reopensAt == start + .milliseconds(3) + .seconds(5))
    }

    @Test func staysClosedWhileMostAnswersSucceed() {
        var breaker = CircuitBreaker(policy: policy)
        for n in 0..<20 { breaker.record(providerFault: n % 3 == 0, probe: false, now: start + .milliseconds(n)) }
        #expect(breaker.state == .closed)
    }

    @Test func faultsSpreadBeyondTheWindowDoNotOpenIt() {
        var breaker = CircuitBreaker(policy: policy)
        for n in 0..<10 { breaker.record(providerFault: true, probe: false, now: start + .seconds(11 * n)) }
        #expect(breaker.state == .closed)
    }

    @Test func successesWithoutAFaultLeaveItResting() {
        var breaker = CircuitBreaker(policy: policy)
        for n in 0..<5 { breaker.record(providerFault: false, probe: false, now: start + .milliseconds(n)) }
        #expect(breaker.isResting)
        breaker.record(providerFault: true, probe: false, now: start + .milliseconds(6))
        #expect(!breaker.isResting)
    }

    @Test func halfOpenLetsOneProbeThroughAndHoldsTheRest() {
        var breaker = opened()
        let later = start + .seconds(6)
        let verdicts = [breaker.verdict(now: later), breaker.verdict(now: later)]
        #expect(verdicts == [.probe, .hold])
        #expect(breaker.state == .halfOpen(probing: true))
        // An answer that is not the probe's changes nothing.
        let byOther = breaker.record(providerFault: false, probe: false, now: later)
        let byProbe = breaker.record(providerFault: false, probe: true, now: later)
        #expect(!byOther && byProbe)
        #expect(breaker.state == .closed)
        let after = breaker.verdict(now: later)
        #expect(after == .send)
    }

    @Test func aFailedProbeDoublesTheOpenPeriodUpToTheMaximum() throws {
        var breaker = opened()
        var now = start + .seconds(6)
        var periods: [Duration] = []
        for _ in 0..<3 {
            let probe = breaker.verdict(now: now)
            #expect(probe == .probe)
            breaker.record(providerFault: true, probe: true, now: now)
            let reopens = try #require(breaker.reopensAt)
            periods.append(reopens - now)
            let early = breaker.verdict(now: reopens - .milliseconds(1))
            #expect(early == .reject)
            now = reopens
        }
        #expect(periods == [.seconds(10), .seconds(12), .seconds(12)])
        // Success closes it, and the next opening starts from the first period again.
        _ = breaker.verdict(now: now)
        breaker.record(providerFault: false, probe: true, now: now)
        for n in 0..<4 { breaker.record(providerFault: true, probe: false, now: now + .milliseconds(n)) }
        #expect(breaker.reopensAt == now + .milliseconds(3) + .seconds(5))
    }

    @Test func aDisabledBreakerNeverOpens() {
        var breaker = CircuitBreaker(policy: .disabled)
        for n in 0..<1_000 { breaker.record(providerFault: true, probe: false, now: start + .milliseconds(n)) }
        let verdict = breaker.verdict(now: start + .seconds(1))
        #expect(verdict == .send)
    }

    @Test func onlyProviderFaultsCount() {
        #expect(DeliveryOutcome.retryAfter(nil, reason: "ServiceUnavailable", providerFault: true).isProviderFault)
        #expect(!DeliveryOutcome.retryAfter(.seconds(5), reason: "TooManyRequests").isProviderFault)
        #expect(!DeliveryOutcome.sent.isProviderFault)
        #expect(!DeliveryOutcome.permanentFailure(reason: "BadTopic").isProviderFault)
    }

    private func opened() -> CircuitBreaker {
        var breaker = CircuitBreaker(policy: policy)
        for n in 0..<4 { breaker.record(providerFault: true, probe: false, now: start + .milliseconds(n)) }
        return breaker
    }
}
