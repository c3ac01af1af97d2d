/// One window of a broadcast sent in windows: the devices after ``after`` up to ``through``.
/// Its deliveries hang on a ``TrackedMessage`` of their own, settled like any message's (every
/// delivery terminal and recorded, or durably queued in its user's backlog); settled, it tells
/// its ``BroadcastRunner`` instead of the broker.
final class BroadcastWindow: Sendable {
    struct Settled: Sendable {
        let window: BroadcastWindow
        /// Some of its deliveries were deferred (their provider's breaker open, without the
        /// backlog): the window is sent again from the journal at this instant.
        let deferredUntil: ContinuousClock.Instant?
    }

    let after: Int64
    let through: Int64
    private let report: @Sendable (Settled) -> Void

    init(after: Int64, through: Int64, report: @escaping @Sendable (Settled) -> Void) {
        self.after = after
        self.through = through
        self.report = report
    }

    /// Called once, when its message is settled. (Its message's session is 0, which no broker
    /// session has: a lost connection never forgets it.)
    func settled(deferredUntil: ContinuousClock.Instant?) {
        report(Settled(window: self, deferredUntil: deferredUntil))
    }
}
