/// What the sandbox saw for one device token.
public struct TokenCounters: Sendable, Hashable {
    /// Requests that named the token (APNs path, FCM `message.token`).
    public var requests = 0
    /// Requests accepted (200) and recorded.
    public var accepted = 0
    /// Rejections by reason (APNs reason or FCM error code / status).
    public var rejections: [String: Int] = [:]

    public init() {}

    public var rejected: Int { rejections.values.reduce(0, +) }
}
