/// Where a delivery stands in the journal.
public enum DeliveryState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Claimed, and no final outcome recorded yet (in flight, retrying, or its worker died).
    case pending
    /// The provider accepted it.
    case sent
    /// The provider said the token is dead; the device's token was marked dead.
    case tokenDead = "token_dead"
    /// It will never be accepted (permanent failure, or retries exhausted).
    case failed
    /// Its provider was failing (the worker's circuit breaker was open): the delivery waits in
    /// the broker, its message republished to the wait queue, and is sent when the message
    /// comes back. No attempt was made after this row was written.
    case deferred
    /// Queued in its user's backlog (``DeliveryBacklog``) behind the user's earlier push: its
    /// message was acknowledged, and the worker holding the backlog sends it in its turn. A
    /// redelivered copy of the message leaves it there.
    case queued

    /// Whether no further attempt will be made.
    public var isTerminal: Bool { self != .pending && self != .deferred && self != .queued }

    public var description: String { rawValue }
}
