/// Provider size limits, in bytes of UTF-8 JSON.
public struct PayloadLimits: Sendable, Hashable, Codable {
    /// APNs: the whole JSON payload (4096 for regular remote notifications).
    public var apnsMaxBytes: Int
    /// FCM: the message payload, counted here as the serialized `data` object plus the
    /// serialized `notification` object (a safe over-estimate of FCM's own count).
    public var fcmMaxBytes: Int

    public init(apnsMaxBytes: Int = 4096, fcmMaxBytes: Int = 4096) {
        self.apnsMaxBytes = apnsMaxBytes
        self.fcmMaxBytes = fcmMaxBytes
    }

    public static let `default` = PayloadLimits()
}
