/// The `apns-push-type` header.
public enum APNsPushType: String, Sendable, Codable, Hashable {
    case alert
    /// Silent `content-available` pushes; APNs requires priority 5 for them.
    case background
}
