/// What ``RetryPolicy`` says after a failed attempt.
public enum RetryDecision: Sendable, Hashable {
    case retry(after: Duration)
    case giveUp(Reason)

    /// Why no further attempt is made.
    public enum Reason: String, Sendable, Hashable {
        case attemptsExhausted
        case deadlineExceeded
    }
}
