import Synchronization

/// The end of the wait for running deliveries, fixed when the first wait begins, so that waits
/// one after another (finish, then close, then the session's end) share one
/// `shutdownTimeout` instead of adding theirs up.
final class ShutdownDeadline: Sendable {
    private let timeout: Duration
    private let fixed = Mutex<ContinuousClock.Instant?>(nil)

    init(timeout: Duration) {
        self.timeout = timeout
    }

    var instant: ContinuousClock.Instant {
        fixed.withLock { value in
            if let value { return value }
            let instant = ContinuousClock.now + timeout
            value = instant
            return instant
        }
    }
}
