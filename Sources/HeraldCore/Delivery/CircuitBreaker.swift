/// Whether to send to one provider endpoint (a platform and app) right now: after it failed past
/// a threshold, stop sending, probe it now and then with one request, resume when it answers.
///
/// Closed (sending) → open when, within ``Policy/window`` of a first fault
/// (``DeliveryOutcome/isProviderFault``), at least ``Policy/minimumFailures`` answers were faults
/// and they make at least ``Policy/failureRatio`` of the answers since that first fault (a
/// window starts at a fault, so answers without one cost nothing). Open → half-open after the
/// open period (``Policy/initialOpen``, doubled after each failed probe up to
/// ``Policy/maximumOpen``). Half-open: one request goes as the probe; its success closes the
/// breaker, its failure opens it again. Any answer from the provider that is not its fault (sent,
/// a dead token, a refused payload, a throttled device) counts as success, unless it came slower
/// than ``Policy/slowAnswer``: a provider that answers every request in seconds holds the lanes
/// (and, through the unacknowledged messages, the intake) as surely as one that fails, so a slow
/// answer counts as a fault (the delivery itself stays sent), as Resilience4j's slow-call rate
/// does.
///
/// A pure value driven by one owner (the worker's delivery engine) with the instants it passes:
/// no clock, no lock.
public struct CircuitBreaker: Sendable {
    public struct Policy: Sendable, Hashable {
        public var minimumFailures: Int
        public var failureRatio: Double
        public var window: Duration
        public var initialOpen: Duration
        public var maximumOpen: Duration
        /// An answer slower than this (the provider's own time, on the wire, as the sender
        /// measured it: never the time a delivery queued in the worker) counts as a fault; nil:
        /// never.
        public var slowAnswer: Duration?

        public init(
            minimumFailures: Int = 10, failureRatio: Double = 0.5, window: Duration = .seconds(10), initialOpen: Duration = .seconds(5),
            maximumOpen: Duration = .seconds(60), slowAnswer: Duration? = .seconds(1)
        ) {
            self.minimumFailures = minimumFailures
            self.failureRatio = failureRatio
            self.window = window
            self.initialOpen = initialOpen
            self.maximumOpen = maximumOpen
            self.slowAnswer = slowAnswer
        }

        /// A breaker that never opens.
        public static let disabled = Policy(minimumFailures: .max, slowAnswer: nil)

        public var isDisabled: Bool { minimumFailures == .max }
    }

    public enum State: Sendable, Hashable {
        case closed
        /// Nothing is sent until `until`.
        case open(until: ContinuousClock.Instant)
        /// One probe may go (`probing`: it is on its way).
        case halfOpen(probing: Bool)

        /// 0 closed, 1 open, 2 half-open: the `herald_circuit_state` gauge.
        public var gaugeValue: Int {
            switch self {
            case .closed: 0
            case .open: 1
            case .halfOpen: 2
            }
        }
    }

    /// What to do with a delivery for this provider now.
    public enum Verdict: Sendable, Hashable {
        case send
        /// Send it as the half-open probe.
        case probe
        /// Half-open, the probe is on its way: wait for its answer.
        case hold
        /// Open: do not send.
        case reject
    }

    public let policy: Policy
    public private(set) var state: State = .closed
    /// The open period to use next time it opens.
    private var openPeriod: Duration
    /// The current window: since its first fault.
    private var windowStart: ContinuousClock.Instant?
    private var answers = 0
    private var failures = 0

    public init(policy: Policy) {
        self.policy = policy
        self.openPeriod = policy.initialOpen
    }

    /// The verdict for one delivery at `now` (an open breaker whose period ended turns
    /// half-open; the first delivery then is the probe).
    public mutating func verdict(now: ContinuousClock.Instant) -> Verdict {
        switch state {
        case .closed:
            return .send
        case .open(let until):
            guard now >= until else { return .reject }
            state = .halfOpen(probing: true)
            return .probe
        case .halfOpen(let probing):
            if probing { return .hold }
            state = .halfOpen(probing: true)
            return .probe
        }
    }

    /// Counts an answer. `probe`: it answers the half-open probe. Returns true when this answer
    /// changed the state.
    @discardableResult
    public mutating func record(providerFault: Bool, probe: Bool, now: ContinuousClock.Instant) -> Bool {
        switch state {
        case .closed:
            if let start = windowStart, now - start < policy.window {
                answers += 1
            } else if providerFault {
                windowStart = now
                answers = 1
                failures = 0
            } else {
                windowStart = nil
                return false
            }
            if providerFault { failures += 1 }
            guard failures >= policy.minimumFailures, Double(failures) >= policy.failureRatio * Double(answers) else { return false }
            open(now: now)
            return true
        case .open:
            // Answers of requests sent before it opened: they change nothing.
            return false
        case .halfOpen:
            guard probe else { return false }
            if providerFault {
                openPeriod = min(openPeriod * 2, policy.maximumOpen)
                open(now: now)
            } else {
                state = .closed
                openPeriod = policy.initialOpen
                windowStart = nil
            }
            return true
        }
    }

    /// Closed with no fault in a current window: nothing to remember.
    public var isResting: Bool { state == .closed && windowStart == nil }

    /// When the breaker next lets a probe through (nil unless open).
    public var reopensAt: ContinuousClock.Instant? {
        if case .open(let until) = state { return until }
        return nil
    }

    private mutating func open(now: ContinuousClock.Instant) {
        state = .open(until: now + openPeriod)
        windowStart = nil
        answers = 0
        failures = 0
    }
}
