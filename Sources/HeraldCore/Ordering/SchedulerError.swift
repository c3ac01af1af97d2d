import HeraldSupport

/// A misuse of ``PerUserScheduler``: completing a ticket that is not in flight.
public struct SchedulerError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<SchedulerError>

    public var code: Code
    public var ticket: String

    @inlinable
    public init(code: Code, ticket: String) {
        self.code = code
        self.ticket = ticket
    }

    public var description: String { "\(code): ticket \(ticket) is not in flight" }
    public var debugDescription: String { "SchedulerError(code: \(code), ticket: \(ticket))" }
}

extension ErrorCode where Domain == SchedulerError {
    /// The ticket was already completed, or never released.
    public static let notInFlight = Self("notInFlight")
}
