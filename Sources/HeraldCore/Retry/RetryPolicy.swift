/// When to try a failed delivery again: exponential backoff with jitter, bounded by a number of
/// attempts and by the time since the first attempt, and honouring a provider's `Retry-After`.
///
/// The delay before attempt `n + 1` (after `n` failed attempts) is
/// `min(maxDelay, initialDelay × multiplier^(n-1))`, reduced by a random fraction of at most
/// ``jitter`` (so retries of many deliveries spread out instead of arriving together). A
/// `Retry-After` from the provider replaces the computed delay when it is longer (never
/// shorter: the provider knows best), even beyond ``maxDelay``. A retry that would start after
/// ``maxElapsed`` (measured from the first attempt) is not made. A failure that was the
/// provider's own (an outage, half its answers failing) spends time, not attempts: it is not
/// this delivery's fault, so an outage, however many probes and flushes it takes, never
/// exhausts ``maxAttempts``; ``maxElapsed`` still bounds it.
///
/// A pure value: the caller passes the randomness (tests pass a seeded generator).
public struct RetryPolicy: Sendable, Hashable, Codable {
    /// Delay after the first failure.
    public var initialDelay: Duration
    /// Growth factor per failure (≥ 1).
    public var multiplier: Double
    /// Upper bound of the computed delay.
    public var maxDelay: Duration
    /// Fraction (0…1) of the delay that may be removed at random.
    public var jitter: Double
    /// Attempts in total, the first included (≥ 1).
    public var maxAttempts: Int
    /// No attempt starts later than this after the first one.
    public var maxElapsed: Duration

    public init(
        initialDelay: Duration = .seconds(1), multiplier: Double = 2, maxDelay: Duration = .seconds(300),
        jitter: Double = 0.2, maxAttempts: Int = 10, maxElapsed: Duration = .seconds(3600)
    ) {
        self.initialDelay = initialDelay
        self.multiplier = max(1, multiplier)
        self.maxDelay = maxDelay
        self.jitter = min(1, max(0, jitter))
        self.maxAttempts = max(1, maxAttempts)
        self.maxElapsed = maxElapsed
    }

    public static let `default` = RetryPolicy()

    /// The decision after a failed attempt.
    ///
    /// - Parameters:
    ///   - attempts: attempts made so far, the failed one included (1 after the first failure).
    ///   - elapsed: time since the first attempt started.
    ///   - retryAfter: the provider's `Retry-After`, if it sent one.
    ///   - providerFault: the failure was the provider's (``DeliveryOutcome/isProviderFault``).
    public func decide(
        attempts: Int, elapsed: Duration, retryAfter: Duration? = nil, providerFault: Bool = false, using generator: inout some RandomNumberGenerator
    ) -> RetryDecision {
        guard providerFault || attempts < maxAttempts else { return .giveUp(.attemptsExhausted) }
        let base = backoff(afterAttempts: attempts)
        let jittered = base * (1 - jitter * Double.random(in: 0..<1, using: &generator))
        var delay = jittered
        if let retryAfter, retryAfter > delay { delay = retryAfter }
        if delay < .zero { delay = .zero }
        guard elapsed + delay <= maxElapsed else { return .giveUp(.deadlineExceeded) }
        return .retry(after: delay)
    }

    /// The decision with the system's random generator.
    public func decide(attempts: Int, elapsed: Duration, retryAfter: Duration? = nil, providerFault: Bool = false) -> RetryDecision {
        var generator = SystemRandomNumberGenerator()
        return decide(attempts: attempts, elapsed: elapsed, retryAfter: retryAfter, providerFault: providerFault, using: &generator)
    }

    /// The delay before jitter after `attempts` failures: `min(maxDelay, initial × multiplier^(attempts-1))`.
    public func backoff(afterAttempts attempts: Int) -> Duration {
        let exponent = Double(max(0, attempts - 1))
        let maxSeconds = maxDelay.seconds
        let seconds = initialDelay.seconds * pow(multiplier, min(exponent, 1024))
        return seconds >= maxSeconds || !seconds.isFinite ? maxDelay : Duration.seconds(seconds)
    }

    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        var k = 0.0
        while k < exponent {
            result *= base
            if result > 1e12 { return .infinity }
            k += 1
        }
        return result
    }
}
