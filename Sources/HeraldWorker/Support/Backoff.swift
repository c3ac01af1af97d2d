/// Exponential backoff with a cap and ±20 % jitter, for reconnects and store retries.
struct Backoff: Sendable {
    let initial: Duration
    let maximum: Duration
    private(set) var current: Duration

    init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        self.current = initial
    }

    /// The next delay (jittered), doubling the base for the call after.
    mutating func next() -> Duration {
        let delay = current.jittered
        current = min(current * 2, maximum)
        return delay
    }

    mutating func reset() { current = initial }
}

extension Duration {
    /// This long, ±20 % at random: retries and periodic looks of several processes spread out
    /// instead of meeting.
    var jittered: Duration { self * Double.random(in: 0.8...1.2) }
}
