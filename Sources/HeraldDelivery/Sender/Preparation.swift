import HeraldCore

/// What a provider sender makes of a delivery before it needs a permit: a request ready to
/// go, or the outcome that says why it cannot be sent.
enum Preparation<Ready> {
    case ready(Ready)
    case refused(DeliveryOutcome)
}
