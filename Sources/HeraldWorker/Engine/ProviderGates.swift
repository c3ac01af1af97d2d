import HeraldCore

/// The engine's circuit breakers, one per provider endpoint (a platform and an app), and the
/// deliveries held while a half-open breaker's probe is out. Engine-owned: only its task
/// touches it.
///
/// Cost when every provider answers: nothing per delivery. A breaker exists only from a
/// provider fault on, and is forgotten once it rests closed again.
struct ProviderGates {
    /// One provider endpoint: APNs or FCM for one app.
    struct Key: Hashable, Sendable {
        let platform: Platform
        let app: String?

        init(_ recipient: Recipient) {
            platform = recipient.subscription.platform
            app = recipient.subscription.app
        }
    }

    /// A breaker that changed state on an answer.
    enum Change {
        case opened(Key, reopensAt: ContinuousClock.Instant, reason: String)
        case closed(Key)
    }

    let policy: CircuitBreaker.Policy
    private var breakers: [Key: CircuitBreaker] = [:]
    /// Parked (lane freed) until their breaker's probe answers.
    private var held: [Key: [Delivery]] = [:]
    /// The last fault's reason per endpoint, for the journal row of what it defers.
    private var lastFault: [Key: String] = [:]

    init(policy: CircuitBreaker.Policy) {
        self.policy = policy
    }

    /// Whether some provider failed lately (a breaker exists): only then do deliveries and
    /// answers need to look at the gates.
    var isWatching: Bool { !breakers.isEmpty }

    mutating func verdict(_ key: Key, now: ContinuousClock.Instant) -> CircuitBreaker.Verdict {
        breakers[key]?.verdict(now: now) ?? .send
    }

    /// Whether an answer that took the provider `answerTime` (on the wire, as the sender measured
    /// it) is too slow: a fault for the breaker (``CircuitBreaker/Policy/slowAnswer``). Never with
    /// the breaker off, nor without an answer time (nothing reached the provider).
    func isSlow(answerTime: Duration?) -> Bool {
        guard let limit = policy.slowAnswer, !policy.isDisabled, let answerTime else { return false }
        return answerTime > limit
    }

    /// Counts a provider's answer (`slow`: ``isSlow(answerTime:)``); returns the state change it
    /// caused, if any.
    mutating func record(_ outcome: DeliveryOutcome, slow: Bool, for key: Key, probe: Bool, now: ContinuousClock.Instant) -> Change? {
        let fault = outcome.isProviderFault || slow
        guard fault || breakers[key] != nil, !policy.isDisabled else { return nil }
        if case .retryAfter(_, let reason, _) = outcome, outcome.isProviderFault {
            lastFault[key] = reason
        } else if slow, let limit = policy.slowAnswer {
            lastFault[key] = "answers slower than \(limit)"
        }
        var breaker = breakers[key] ?? CircuitBreaker(policy: policy)
        let changed = breaker.record(providerFault: fault, probe: probe, now: now)
        if breaker.isResting {
            breakers[key] = nil
            lastFault[key] = nil
        } else {
            breakers[key] = breaker
        }
        guard changed else { return nil }
        if let reopensAt = breaker.reopensAt {
            return .opened(key, reopensAt: reopensAt, reason: lastFault[key] ?? "provider failing")
        }
        return .closed(key)
    }

    /// Whether deliveries for `key` must not be sent (open or probing).
    func isBlocked(_ key: Key) -> Bool {
        guard let breaker = breakers[key] else { return false }
        return breaker.state != .closed
    }

    /// When an open breaker lets its probe through.
    func reopensAt(_ key: Key) -> ContinuousClock.Instant? { breakers[key]?.reopensAt }

    func reason(_ key: Key) -> String { lastFault[key] ?? "provider failing" }

    mutating func hold(_ delivery: Delivery, for key: Key) {
        held[key, default: []].append(delivery)
    }

    /// The deliveries held for `key`, removed.
    mutating func releaseHeld(_ key: Key) -> [Delivery] {
        held.removeValue(forKey: key) ?? []
    }

    /// Every held delivery, removed (stopping).
    mutating func releaseAllHeld() -> [Delivery] {
        defer { held.removeAll() }
        return held.values.flatMap { $0 }
    }

    /// Held deliveries per platform (the waiting gauge).
    func heldCount(_ platform: Platform) -> Int {
        held.reduce(0) { $0 + ($1.key.platform == platform ? $1.value.count : 0) }
    }
}
