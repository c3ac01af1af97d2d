import Foundation
import HeraldCore
import HeraldHTTP
import Logging

/// Sends notifications to Apple's provider API: `POST /3/device/<token>` over HTTP/2, many
/// concurrent streams on few connections (HeraldHTTP), authenticated with an ES256 provider
/// token (``APNsTokenProvider``) or, per app, a client certificate.
///
/// Headers: `apns-topic` (the device's app, else the first configured app), `apns-push-type`,
/// `apns-priority`, `apns-expiration` (when the payload has a TTL) and `apns-collapse-id` (the
/// delivery key) from the payload HeraldCore built, and a fresh `apns-id`.
///
/// Apple's answer is classified once (``APNsResponseClassifier``): 200 `.sent`; 410 and 400
/// `BadDeviceToken`/`DeviceTokenNotForTopic` `.tokenDead`; 429/5xx `.retryAfter`; other 4xx
/// `.permanentFailure` with Apple's reason. On 403 `ExpiredProviderToken` or
/// `InvalidProviderToken` the sender makes a new token (once, however many requests saw it) and
/// tries the request once more; it never sleeps and retries otherwise — the worker applies its
/// `RetryPolicy`.
///
/// Backpressure: at most `maxInFlight` requests are in flight; further sends wait. Until the
/// first answer arrives only one request is sent, so that a fresh connection learns the server's
/// stream limit before a burst.
///
/// Thread rules: an actor; `send` may be called from many tasks at once. Call ``shutdown()``
/// when done.
public actor APNsSender: PushSender {
    public nonisolated let configuration: APNsConfiguration
    private let apps: [String: APNsApp]
    private let defaultTopic: String
    private let baseURL: String
    private let tokenClient: HTTPClient?
    private let certificateClients: [String: HTTPClient]
    private let tokenProvider: APNsTokenProvider?
    private let gate: InFlightGate
    private let logger: Logger
    private var counters = SenderStatistics()

    /// Validates the configuration (reading every key and certificate) and starts the HTTP
    /// clients.
    ///
    /// - Throws: ``SenderConfigurationError`` naming the file and the problem.
    public init(
        configuration: APNsConfiguration, clock: any ProviderClock = SystemProviderClock(), logger: Logger = Logger(label: "herald.apns")
    ) throws(SenderConfigurationError) {
        let signingKey = try configuration.load(now: clock.now())
        self.configuration = configuration
        self.logger = logger
        self.baseURL = configuration.effectiveBaseURL
        self.defaultTopic = configuration.apps[0].topic
        self.apps = Dictionary(uniqueKeysWithValues: configuration.apps.map { ($0.topic, $0) })  // topics are unique (validated)
        self.gate = InFlightGate(limit: configuration.maxInFlight)
        func makeClient(_ http: HTTPClientConfiguration) throws(SenderConfigurationError) -> HTTPClient {
            do {
                return try HTTPClient(configuration: http, logger: logger)
            } catch {
                throw SenderConfigurationError(.invalidValue, problem: "cannot start the APNs HTTP client: \(error)")
            }
        }
        if let signingKey {
            tokenClient = try makeClient(configuration.http)
            tokenProvider = APNsTokenProvider(key: signingKey, clock: clock, refreshInterval: configuration.tokenRefreshInterval)
        } else {
            tokenClient = nil
            tokenProvider = nil
        }
        var certificateClients: [String: HTTPClient] = [:]
        for app in configuration.apps {
            guard let certificate = app.certificate else { continue }
            var http = configuration.http
            http.tls.clientCertificate = certificate.clientCertificate
            certificateClients[app.topic] = try makeClient(http)
        }
        self.certificateClients = certificateClients
    }

    public func send(_ delivery: PushDelivery) async -> DeliveryOutcome {
        let outcome = await perform(delivery)
        counters.count(outcome.kind)
        if outcome != .sent { logger.debugRefusal("APNs did not accept a notification", delivery: delivery, outcome: outcome) }
        return outcome
    }

    /// Counters since the sender started.
    public var statistics: SenderStatistics {
        get async {
            var snapshot = counters
            snapshot.credentialsIssued = await tokenProvider?.tokensGenerated ?? 0
            snapshot.connectionsOpened = (tokenClient?.statistics.connectionsOpened ?? 0)
                + certificateClients.values.reduce(0) { $0 + $1.statistics.connectionsOpened }
            return snapshot
        }
    }

    /// Stops the HTTP clients; sends in flight end with `.retryAfter`.
    public func shutdown() async {
        await tokenClient?.shutdown()
        for client in certificateClients.values { await client.shutdown() }
    }

    private func perform(_ delivery: PushDelivery) async -> DeliveryOutcome {
        guard delivery.payload.platform == .ios, let options = delivery.payload.apns else {
            return .permanentFailure(reason: "not an APNs payload (platform \(delivery.payload.platform))")
        }
        let topic = delivery.target.app ?? defaultTopic
        guard let app = apps[topic] else {
            return .permanentFailure(reason: "no APNs app configured for '\(topic.prefix(100))'")
        }
        let client: HTTPClient
        if let certificateClient = certificateClients[topic] {
            client = certificateClient
        } else if let tokenClient {
            client = tokenClient
        } else {
            return .permanentFailure(reason: "no APNs credentials for '\(topic.prefix(100))'")
        }

        guard await gate.acquire() else { return .retryAfter(nil, reason: "cancelled before sending") }
        defer { gate.release() }

        var headers = HTTPHeaders()
        headers.add(name: "apns-topic", value: topic)
        headers.add(name: "apns-push-type", value: options.pushType.rawValue)
        headers.add(name: "apns-priority", value: String(options.priority))
        if let expiration = options.expiration { headers.add(name: "apns-expiration", value: String(expiration)) }
        headers.add(name: "apns-collapse-id", value: options.collapseId)
        headers.add(name: "apns-id", value: UUID().uuidString.lowercased())
        headers.add(name: "content-type", value: "application/json")
        // Unreserved ASCII kept, the rest escaped: a malformed token reaches Apple (which answers
        // BadDeviceToken) instead of changing the request.
        let url = baseURL + "/3/device/" + PercentEncoding.escape(delivery.target.token)

        var refreshedCredential = false
        while true {
            var requestHeaders = headers
            var bearer: String?
            if app.certificate == nil, let tokenProvider {
                do {
                    let token = try await tokenProvider.token()
                    bearer = token
                    requestHeaders.add(name: "authorization", value: "bearer " + token)
                } catch {
                    logger.error("cannot sign an APNs provider token", metadata: ["error": "\(error)"])
                    return .retryAfter(nil, reason: "cannot sign a provider token")
                }
            }
            counters.requests += 1
            let response: HTTPResponse
            do {
                response = try await client.execute(HTTPRequest(method: .post, url: url, headers: requestHeaders, body: delivery.payload.body))
            } catch {
                return APNsResponseClassifier.outcome(for: error)
            }
            gate.open()
            if response.status == 403, let reason = APNsResponseClassifier.reason(in: response.body), reason.requiresNewProviderToken,
               let bearer, let tokenProvider
            {
                if !refreshedCredential {
                    refreshedCredential = true
                    counters.credentialRetries += 1
                    if await tokenProvider.invalidate(bearer) {
                        logger.notice("APNs refused the provider token; making a new one", metadata: ["herald.reason": "\(reason)"])
                    }
                    continue
                }
                if reason == .invalidProviderToken {
                    logger.error(
                        "APNs refuses the provider token even after a new one was made: check apns.key_id, apns.team_id and the .p8 key",
                        metadata: ["herald.key_id": "\(tokenProvider.key.keyID)", "herald.team_id": "\(tokenProvider.key.teamID)"]
                    )
                }
            }
            return APNsResponseClassifier.outcome(status: response.status, body: response.body, headers: response.headers)
        }
    }
}
