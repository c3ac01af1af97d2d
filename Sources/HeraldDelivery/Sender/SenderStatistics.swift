import HeraldCore

/// What a provider sender has done since it started: outcomes by kind and the work behind them.
public struct SenderStatistics: Sendable, Hashable {
    /// Deliveries the provider accepted.
    public var sent = 0
    /// Deliveries whose token the provider declared dead.
    public var tokenDead = 0
    /// Deliveries answered `.retryAfter`.
    public var retryLater = 0
    /// Deliveries answered `.permanentFailure`.
    public var permanentFailures = 0
    /// HTTP requests made to the provider (a send with a credential refresh makes two).
    public var requests = 0
    /// Sends that were repeated once because the provider refused the credential (APNs
    /// `ExpiredProviderToken`/`InvalidProviderToken`, FCM 401).
    public var credentialRetries = 0
    /// APNs provider tokens signed / FCM access tokens fetched.
    public var credentialsIssued = 0
    /// HTTP connections opened to the provider (HeraldHTTP's count).
    public var connectionsOpened = 0

    public init() {}

    mutating func count(_ outcome: DeliveryOutcome) {
        switch outcome {
        case .sent: sent += 1
        case .tokenDead: tokenDead += 1
        case .retryAfter: retryLater += 1
        case .permanentFailure: permanentFailures += 1
        }
    }
}
