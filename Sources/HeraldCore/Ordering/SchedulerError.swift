/// A misuse of ``PerUserScheduler``: completing a ticket that is not in flight.
public struct SchedulerError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The ticket was already completed, or never released.
        public static let notInFlight = Code(rawValue: "notInFlight")
    }

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
