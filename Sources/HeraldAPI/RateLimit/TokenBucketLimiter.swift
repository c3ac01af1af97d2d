import HeraldCore
import Synchronization

/// Per-key token buckets: each key may make ``RateLimitConfiguration/burst`` requests at once,
/// refilled at ``RateLimitConfiguration/requestsPerSecond``.
///
/// Bounded: when more than `maxTrackedUsers` keys are remembered, buckets that have refilled
/// completely (indistinguishable from new ones) are dropped, and if that is not enough, all.
/// Thread-safe (one `Mutex`); the clock is injectable for tests.
public final class TokenBucketLimiter: Sendable {
    private let configuration: RateLimitConfiguration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let buckets = Mutex<[String: Bucket]>([:])

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    public init(configuration: RateLimitConfiguration, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.configuration = configuration
        self.now = now
    }

    /// Takes one token for `key`. Returns `nil` when the request may proceed, otherwise how
    /// long until a token is available.
    public func acquire(_ key: String) -> Duration? {
        let now = now()
        let rate = configuration.requestsPerSecond
        let burst = Double(configuration.burst)
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated).seconds * rate)
            bucket.updated = now
            defer {
                buckets[key] = bucket
                if buckets.count > configuration.maxTrackedUsers {
                    Self.evict(&buckets, now: now, rate: rate, burst: burst, limit: configuration.maxTrackedUsers)
                }
            }
            guard bucket.tokens >= 1 else {
                return .milliseconds(Int64(((1 - bucket.tokens) / rate * 1000).rounded(.up)))
            }
            bucket.tokens -= 1
            return nil
        }
    }

    /// How many keys are remembered (for tests).
    public var trackedKeys: Int { buckets.withLock { $0.count } }

    private static func evict(_ buckets: inout [String: Bucket], now: ContinuousClock.Instant, rate: Double, burst: Double, limit: Int) {
        buckets = buckets.filter { $0.value.tokens + (now - $0.value.updated).seconds * rate < burst }
        if buckets.count > limit { buckets.removeAll() }
    }
}
