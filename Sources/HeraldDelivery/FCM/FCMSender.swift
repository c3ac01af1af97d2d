import HeraldCore
import Logging

/// Sends notifications with FCM HTTP v1: `POST /v1/projects/<project>/messages:send` over
/// HTTP/2 (HeraldHTTP), with an OAuth2 access token obtained from the project's service account
/// (``FCMAccessTokenProvider``: one token exchange for many concurrent sends).
///
/// The body is the `{"message":{…}}` HeraldCore built for the device. The device's `app` picks
/// the project (by alias or project id); devices without one use the first project.
///
/// Google's answer is classified once (``FCMResponseClassifier``): 200 `.sent`; `UNREGISTERED`,
/// `NOT_FOUND`, `SENDER_ID_MISMATCH` `.tokenDead`; `QUOTA_EXCEEDED`, `UNAVAILABLE`, `INTERNAL`
/// `.retryAfter` with Google's `Retry-After`; `INVALID_ARGUMENT` `.permanentFailure`. A 401
/// drops the access token (once, however many requests saw it) and the request is tried once
/// more with a new one; nothing else is retried here — the worker applies its `RetryPolicy`.
///
/// Backpressure, the cost per delivery and the retry with a new token are the shared
/// ``ProviderSender``'s: at most `maxInFlight` requests in flight, one until the first answer;
/// no task, actor hop or continuation per delivery on ``submit(_:timed:)`` — a task is made
/// only to fetch an access token (about once an hour) or after a 401.
///
/// Thread rules: a `Sendable` class, not an actor: everything it holds is immutable or behind
/// its own lock, so no call needs to hop onto an executor. `send` and `submit` may be called
/// from anywhere, concurrently. Call ``shutdown()`` when done.
public final class FCMSender: ProviderBackedSender {
    public let configuration: FCMConfiguration
    let core: ProviderSender<FCMProvider>

    /// Validates the configuration (reading every service-account file) and starts the client.
    ///
    /// - Throws: ``SenderConfigurationError`` naming the file and the problem.
    public init(
        configuration: FCMConfiguration, clock: any ProviderClock = SystemProviderClock(), logger: Logger = Logger(label: "herald.fcm")
    ) throws(SenderConfigurationError) {
        let accounts = try configuration.load()
        let provider = try FCMProvider(configuration: configuration, accounts: accounts, clock: clock, logger: logger)
        self.configuration = configuration
        self.core = ProviderSender(provider: provider, maxInFlight: configuration.maxInFlight, logger: logger)
    }

    /// Counters since the sender started.
    public var statistics: SenderStatistics {
        get async { core.statistics }
    }
}
