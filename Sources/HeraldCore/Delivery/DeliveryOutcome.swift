/// The one classification of a provider's answer, made by the senders and acted on by the worker
/// (which never parses provider strings). `reason` is the provider's reason code or a short
/// description; it must not contain device tokens or payload text.
public enum DeliveryOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The provider accepted the notification.
    case sent
    /// A transient failure (throttling, 5xx, network): try again, after `after` if the provider
    /// said so (`Retry-After`), otherwise after the ``RetryPolicy``'s backoff. `providerFault`:
    /// the provider itself failed (5xx, no connection, a timeout, its token service down), not
    /// this one request (a throttled device): what the worker's ``CircuitBreaker`` counts.
    case retryAfter(Duration?, reason: String, providerFault: Bool = false)
    /// The token will never work again (APNs 410 `Unregistered`/`BadDeviceToken`, FCM
    /// `UNREGISTERED`): deactivate the device.
    case tokenDead(reason: String)
    /// This notification will never be accepted (payload too large, bad topic…): record it and
    /// stop.
    case permanentFailure(reason: String)

    /// Whether no further attempt will be made for this delivery.
    public var isTerminal: Bool {
        if case .retryAfter = self { return false }
        return true
    }

    /// Whether the provider itself failed (see ``retryAfter(_:reason:providerFault:)``).
    public var isProviderFault: Bool {
        if case .retryAfter(_, _, true) = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .sent: "sent"
        case .retryAfter(let after, let reason, _): "retry after \(after.map { "\($0)" } ?? "backoff"): \(reason)"
        case .tokenDead(let reason): "token dead: \(reason)"
        case .permanentFailure(let reason): "permanent failure: \(reason)"
        }
    }
}
