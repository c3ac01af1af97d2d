/// The journal's answer to one ``DeliveryClaim``.
public enum ClaimResult: Sendable, Hashable {
    /// First claim: send it. `position` is the device's next notification position (seed
    /// 002), to put into the payload.
    case fresh(position: Int)
    /// It was sent before (a redelivered message): skip it.
    case alreadySent
    /// It ended before without being sent (`.tokenDead` or `.failed`): skip it.
    case alreadyTerminal(DeliveryState)
    /// Claimed before and never recorded as finished: an earlier attempt may or may not have
    /// reached the provider. Resend with the same `position` (the collapse id makes a
    /// duplicate harmless) or give up; `attempts` is the count last recorded.
    case inDoubt(position: Int, attempts: Int)
    /// The device no longer exists (deleted since its subscription was read): skip it.
    case unknownDevice

    /// The position to send with, for `.fresh` and `.inDoubt`.
    public var position: Int? {
        switch self {
        case .fresh(let position), .inDoubt(let position, _): position
        default: nil
        }
    }
}
