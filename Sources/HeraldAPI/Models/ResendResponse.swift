import Hummingbird

/// `POST /v1/devices/{deviceId}/notifications/resend`: what was sent again.
struct ResendResponse: ResponseEncodable, Sendable {
    /// How many notifications after `after` the caller missed (within the log's retention).
    var missed: Int
    /// Pushes the provider accepted.
    var sent: Int
    /// Pushes the provider refused or that could not be sent now.
    var failed: Int
    /// Whether one summary push was sent instead of the missed ones.
    var summary: Bool
}
