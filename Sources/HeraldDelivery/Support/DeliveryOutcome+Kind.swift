import HeraldCore

extension DeliveryOutcome {
    var kind: DeliveryOutcomeKind {
        switch self {
        case .sent: .sent
        case .tokenDead: .tokenDead
        case .retryAfter: .retryAfter
        case .permanentFailure: .permanentFailure
        }
    }
}
