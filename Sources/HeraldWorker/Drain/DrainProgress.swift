/// Where a drain stands: reported on every poll, and as the final summary.
public struct DrainProgress: Sendable, Hashable {
    /// Messages ready in the queue (not counting those held by the worker; with partitions, the
    /// main queue and every partition queue together); nil when the broker could not be asked.
    public var queueDepth: Int?
    /// Deliveries queued in the backlog (their messages were acknowledged, they are owed all the
    /// same); nil when the database could not be asked.
    public var queuedInBacklog: Int?
    /// Broadcasts sent in windows and not done yet (acknowledged, owed all the same); nil when
    /// the database could not be asked.
    public var broadcastsUnderWay: Int?
    /// The worker's counters (consumed, delivered, dead-lettered, in flight…).
    public var statistics: WorkerStatistics
    public var elapsed: Duration
    /// True once the queue is empty and nothing is in flight (the final report of a drain that
    /// succeeded).
    public var isComplete: Bool
}
