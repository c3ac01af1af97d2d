import Foundation

/// The wall clock the token providers read: provider tokens carry wall-clock times (`iat`,
/// `exp`), so this is `Date`, not a monotonic clock. Injectable so that tests can age a token
/// by an hour without waiting one.
public protocol ProviderClock: Sendable {
    func now() -> Date
}

/// The system's wall clock.
public struct SystemProviderClock: ProviderClock {
    public init() {}
    public func now() -> Date { Date() }
}
