/// How the sandbox treats one device token, to script the failures Herald must handle.
/// Applied to APNs and FCM tokens alike, after the request passed every validation.
///
/// In a rules file or the admin endpoint it is JSON:
/// `{"unregistered": true}`, `{"throttle_retry_after": 5}`, `{"fail_first": 2}`,
/// `{"delay_ms": 300}`, `{"topic": "com.example.other"}` (keys may be combined).
public struct TokenBehavior: Sendable, Hashable, Codable {
    /// APNs 410 `Unregistered` / FCM 404 `UNREGISTERED`, every time.
    public var unregistered: Bool
    /// APNs 429 `TooManyRequests` / FCM 429 `QUOTA_EXCEEDED`, every time, with this
    /// `Retry-After` (seconds).
    public var throttleRetryAfter: Int?
    /// APNs 503 `ServiceUnavailable` / FCM 503 `UNAVAILABLE` for the first N requests, then success.
    public var failFirst: Int
    /// Wait this long before answering (milliseconds).
    public var delayMilliseconds: Int
    /// APNs only: the bundle id the token belongs to; another topic gets 400
    /// `DeviceTokenNotForTopic`.
    public var topic: String?

    public init(unregistered: Bool = false, throttleRetryAfter: Int? = nil, failFirst: Int = 0, delayMilliseconds: Int = 0, topic: String? = nil) {
        self.unregistered = unregistered
        self.throttleRetryAfter = throttleRetryAfter
        self.failFirst = failFirst
        self.delayMilliseconds = delayMilliseconds
        self.topic = topic
    }

    public static let unregistered = TokenBehavior(unregistered: true)
    public static func throttled(retryAfter seconds: Int) -> TokenBehavior { TokenBehavior(throttleRetryAfter: seconds) }
    public static func flaky(failures: Int) -> TokenBehavior { TokenBehavior(failFirst: failures) }
    public static func delay(milliseconds: Int) -> TokenBehavior { TokenBehavior(delayMilliseconds: milliseconds) }
    public static func belongs(toTopic topic: String) -> TokenBehavior { TokenBehavior(topic: topic) }

    enum CodingKeys: String, CodingKey {
        case unregistered
        case throttleRetryAfter = "throttle_retry_after"
        case failFirst = "fail_first"
        case delayMilliseconds = "delay_ms"
        case topic
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        unregistered = try container.decodeIfPresent(Bool.self, forKey: .unregistered) ?? false
        throttleRetryAfter = try container.decodeIfPresent(Int.self, forKey: .throttleRetryAfter)
        failFirst = try container.decodeIfPresent(Int.self, forKey: .failFirst) ?? 0
        delayMilliseconds = try container.decodeIfPresent(Int.self, forKey: .delayMilliseconds) ?? 0
        topic = try container.decodeIfPresent(String.self, forKey: .topic)
    }
}
