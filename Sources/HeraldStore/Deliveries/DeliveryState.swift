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

    /// Whether no further attempt will be made.
    public var isTerminal: Bool { self != .pending }

    public var description: String { rawValue }
}
