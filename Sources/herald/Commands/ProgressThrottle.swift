import Synchronization

/// Rate-limits the plain (non-terminal) progress lines of `herald drain`.
final class ProgressThrottle: Sendable {
    private let last = Mutex<ContinuousClock.Instant?>(nil)

    func due(every interval: Duration) -> Bool {
        last.withLock { last in
            let now = ContinuousClock.now
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
    }
}
