import Foundation
import HeraldCore
import Logging

/// Sends notifications to Apple's provider API: `POST /3/device/<token>` over HTTP/2, many
/// concurrent streams on few connections (HeraldHTTP), authenticated with an ES256 provider
/// token (``APNsTokenProvider``) or, per app, a client certificate.
///
/// Headers: `apns-topic` (the device's app, else the first configured app), `apns-push-type`,
/// `apns-priority`, `apns-expiration` (when the payload has a TTL) and `apns-collapse-id` (the
/// delivery key) from the payload HeraldCore built, and `apns-id` derived from the delivery key
/// (``DeliveryKey/apnsID``).
///
/// Apple's answer is classified once (``APNsResponseClassifier``): 200 `.sent`; 410 and 400
/// `BadDeviceToken`/`DeviceTokenNotForTopic` `.tokenDead`; 429/5xx `.retryAfter`; other 4xx
/// `.permanentFailure` with Apple's reason. On 403 `ExpiredProviderToken` or
/// `InvalidProviderToken` the sender makes a new token (once, however many requests saw it) and
/// tries the request once more; it never sleeps and retries otherwise — the worker applies its
/// `RetryPolicy`.
///
/// Backpressure, the cost per delivery and the retry with a new token are the shared
/// ``ProviderSender``'s: at most `maxInFlight` requests in flight, one until the first answer;
/// no task, actor hop or continuation per delivery on ``submit(_:timed:)`` — a task is made
/// only to sign a token (once per 50 minutes) or to replace a refused one.
///
/// Thread rules: a `Sendable` class, not an actor: everything it holds is immutable or
/// behind its own lock (the gate, the counters, the token cache), so no call needs to hop onto
/// an executor. `send` and `submit` may be called from anywhere, concurrently. Call
/// ``shutdown()`` when done.
public final class APNsSender: ProviderBackedSender {
    public let configuration: APNsConfiguration
    /// When the earliest client certificate expires (`nil` with token authentication only),
    /// as read at start: the `herald_apns_certificate_expiry_timestamp_seconds` gauge.
    public let certificateExpiry: Date?
    let core: ProviderSender<APNsProvider>

    /// Validates the configuration (reading every key and certificate) and starts the HTTP
    /// clients.
    ///
    /// - Throws: ``SenderConfigurationError`` naming the file and the problem.
    public init(
        configuration: APNsConfiguration, clock: any ProviderClock = SystemProviderClock(), logger: Logger = Logger(label: "herald.apns")
    ) throws(SenderConfigurationError) {
        let (signingKey, certificateExpiry) = try configuration.load(now: clock.now())
        self.configuration = configuration
        self.certificateExpiry = certificateExpiry
        let provider = try APNsProvider(configuration: configuration, signingKey: signingKey, clock: clock, logger: logger)
        self.core = ProviderSender(provider: provider, maxInFlight: configuration.maxInFlight, logger: logger)
    }

    /// Counters since the sender started.
    public var statistics: SenderStatistics {
        get async { core.statistics }
    }
}
