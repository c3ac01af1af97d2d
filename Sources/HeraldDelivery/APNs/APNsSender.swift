import Foundation
import HTTPTypes
import HeraldCore
import HeraldHTTP
import Logging
import Synchronization

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
/// Backpressure: at most `maxInFlight` requests are in flight; further deliveries wait in the
/// ``InFlightGate`` (``send(_:)`` suspends; ``submit(_:timed:)`` returns at once and the
/// delivery starts when a permit frees). Until the first answer arrives only one request is
/// sent, so that a fresh connection learns the server's stream limit before a burst.
///
/// The cost per delivery, on ``submit(_:timed:)``: no task, no actor hop, no
/// continuation. The provider token is read from its cache under a lock, the request goes to
/// the HTTP client's driver thread through its queue, and the outcome is classified and
/// reported on that thread. A task is made only to sign a token (once per 50 minutes) or to
/// refresh a refused one.
///
/// Thread rules: a `Sendable` class, not an actor: everything it holds is immutable or
/// behind its own lock (the gate, the counters, the token cache), so no call needs to hop onto
/// an executor. `send` and `submit` may be called from anywhere, concurrently. Call
/// ``shutdown()`` when done.
public final class APNsSender: PushSender, DispatchingSender {
    public let configuration: APNsConfiguration
    /// When the earliest client certificate expires (`nil` with token authentication only),
    /// as read at start: the `herald_apns_certificate_expiry_timestamp_seconds` gauge.
    public let certificateExpiry: Date?
    private let apps: [String: Route]
    private let defaultTopic: String
    private let baseURL: String
    private let clients: [HTTPClient]
    private let tokenProvider: APNsTokenProvider?
    private let gate: InFlightGate
    private let logger: Logger
    private let counters = Mutex(SenderStatistics())

    /// How one app is reached: its client, and whether it signs requests with the provider token.
    private struct Route: Sendable {
        let client: HTTPClient
        let usesToken: Bool
    }

    /// A delivery ready to go: its request without the credential, and its route.
    private struct Prepared: Sendable {
        let request: HTTPClientRequest
        let route: Route
    }

    static let topicField = HTTPField.Name("apns-topic")!
    static let pushTypeField = HTTPField.Name("apns-push-type")!
    static let priorityField = HTTPField.Name("apns-priority")!
    static let expirationField = HTTPField.Name("apns-expiration")!
    static let collapseIDField = HTTPField.Name("apns-collapse-id")!
    static let idField = HTTPField.Name("apns-id")!

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
        self.logger = logger
        self.baseURL = configuration.effectiveBaseURL
        self.defaultTopic = configuration.apps[0].topic
        self.gate = InFlightGate(limit: configuration.maxInFlight)
        func makeClient(_ http: HTTPClientConfiguration) throws(SenderConfigurationError) -> HTTPClient {
            do {
                return try HTTPClient(configuration: http, logger: logger)
            } catch {
                throw SenderConfigurationError(.invalidValue, problem: "cannot start the APNs HTTP client: \(error)")
            }
        }
        var clients: [HTTPClient] = []
        let tokenClient: HTTPClient?
        if let signingKey {
            let client = try makeClient(configuration.http)
            clients.append(client)
            tokenClient = client
            tokenProvider = APNsTokenProvider(key: signingKey, clock: clock, refreshInterval: configuration.tokenRefreshInterval)
        } else {
            tokenClient = nil
            tokenProvider = nil
        }
        var apps: [String: Route] = [:]
        for app in configuration.apps {
            if let certificate = app.certificate {
                var http = configuration.http
                http.tls.clientCertificate = certificate.clientCertificate
                let client = try makeClient(http)
                clients.append(client)
                apps[app.topic] = Route(client: client, usesToken: false)
            } else if let tokenClient {
                apps[app.topic] = Route(client: tokenClient, usesToken: true)
            }
        }
        self.apps = apps
        self.clients = clients
    }

    public func send(_ delivery: PushDelivery) async -> DeliveryOutcome { await sendThroughDispatch(delivery) }

    public func submit(_ deliveries: [PushDelivery], timed completion: @escaping @Sendable (Int, DeliveryOutcome, Duration?) -> Void) {
        submitThroughDispatch(deliveries, completion: completion)
    }

    /// Counters since the sender started.
    public var statistics: SenderStatistics {
        get async {
            var snapshot = counters.withLock { $0 }
            snapshot.credentialsIssued = await tokenProvider?.tokensGenerated ?? 0
            snapshot.connectionsOpened = clients.reduce(0) { $0 + $1.statistics.connectionsOpened }
            return snapshot
        }
    }

    /// Stops the HTTP clients; sends in flight end with `.retryAfter`.
    public func shutdown() async {
        for client in clients { await client.shutdown() }
    }

    // MARK: One delivery

    /// Sends `delivery` once a permit is free and reports its outcome to `completion`, once.
    /// `abandoned` (from ``send(_:)``) says the caller stopped waiting before the permit came:
    /// the delivery is then not sent.
    func dispatch(
        _ delivery: PushDelivery, abandoned: (@Sendable () -> Bool)?, completion: @escaping @Sendable (DeliveryOutcome, Duration?) -> Void
    ) {
        let finish: @Sendable (DeliveryOutcome, Duration?) -> Void = { [self] outcome, answerTime in
            counters.withLock { $0.count(outcome) }
            if outcome != .sent { logger.debugRefusal("APNs did not accept a notification", delivery: delivery, outcome: outcome) }
            completion(outcome, answerTime)
        }
        let prepared: Prepared
        switch prepare(delivery) {
        case .ready(let ready): prepared = ready
        case .refused(let outcome):
            finish(outcome, nil)
            return
        }
        gate.acquire { [self] in
            if abandoned?() == true {
                gate.release()
                return
            }
            transmit(prepared, refreshedCredential: false) { [self] outcome, answerTime in
                gate.release()
                finish(outcome, answerTime)
            }
        }
    }

    /// The request for `delivery`, or why it cannot be sent.
    private func prepare(_ delivery: PushDelivery) -> Preparation<Prepared> {
        guard delivery.payload.platform == .ios, let options = delivery.payload.apns else {
            return .refused(.permanentFailure(reason: "not an APNs payload (platform \(delivery.payload.platform))"))
        }
        let topic = delivery.target.app ?? defaultTopic
        // Every configured app has a route: validation refused apps without credentials.
        guard let route = apps[topic] else {
            return .refused(.permanentFailure(reason: "no APNs app configured for '\(topic.prefix(100))'"))
        }
        var fields = HTTPFields()
        fields.reserveCapacity(8)
        fields[Self.topicField] = topic
        fields[Self.pushTypeField] = options.pushType.rawValue
        fields[Self.priorityField] = String(options.priority)
        if let expiration = options.expiration { fields[Self.expirationField] = String(expiration) }
        fields[Self.collapseIDField] = options.collapseId
        fields[Self.idField] = delivery.deliveryKey.apnsID
        fields[.contentType] = "application/json"
        // Unreserved ASCII kept, the rest escaped: a malformed token reaches Apple (which answers
        // BadDeviceToken) instead of changing the request.
        let url = baseURL + "/3/device/" + delivery.target.token.percentEncodedComponent
        return .ready(Prepared(request: HTTPClientRequest(method: .post, url: url, headerFields: fields, body: delivery.payload.body), route: route))
    }

    /// Sends the prepared request (with the provider token, for token apps) and classifies the
    /// answer, on the HTTP client's driver thread. A refused provider token is replaced once and
    /// the request sent again.
    private func transmit(_ prepared: Prepared, refreshedCredential: Bool, completion: @escaping @Sendable (DeliveryOutcome, Duration?) -> Void) {
        var request = prepared.request
        let bearer: String?
        if prepared.route.usesToken, let tokenProvider {
            guard let token = tokenProvider.cachedToken() else {
                // No token yet, or it is too old: sign one (a task, once per refresh).
                Task { [self] in
                    do {
                        _ = try await tokenProvider.token()
                        transmit(prepared, refreshedCredential: refreshedCredential, completion: completion)
                    } catch {
                        logger.error("cannot sign an APNs provider token", metadata: [LogKey.error: "\(error)"])
                        completion(.retryAfter(nil, reason: "cannot sign a provider token"), nil)
                    }
                }
                return
            }
            bearer = token
            request.headerFields[.authorization] = "bearer " + token
        } else {
            bearer = nil
        }
        counters.withLock { $0.requests += 1 }
        prepared.route.client.submit(request) { [self] result in
            let response: HTTPClientResponse
            switch result {
            case .success(let answer): response = answer
            case .failure(let error):
                completion(APNsResponseClassifier.outcome(for: error), nil)
                return
            }
            gate.open()
            if response.status == .forbidden, let bearer, let tokenProvider,
                let reason = APNsResponseClassifier.reason(in: response.body), reason.requiresNewProviderToken
            {
                if !refreshedCredential {
                    counters.withLock { $0.credentialRetries += 1 }
                    Task { [self] in
                        if await tokenProvider.invalidate(bearer) {
                            logger.notice("APNs refused the provider token; making a new one", metadata: [LogKey.reason: "\(reason)"])
                        }
                        transmit(prepared, refreshedCredential: true, completion: completion)
                    }
                    return
                }
                if reason == .invalidProviderToken {
                    logger.error(
                        "APNs refuses the provider token even after a new one was made: check apns.key_id, apns.team_id and the .p8 key",
                        metadata: [LogKey.keyId: "\(tokenProvider.key.keyID)", LogKey.teamId: "\(tokenProvider.key.teamID)"]
                    )
                }
            }
            completion(
                APNsResponseClassifier.outcome(status: response.status.code, body: response.body, headerFields: response.headerFields),
                response.answerTime)
        }
    }
}
