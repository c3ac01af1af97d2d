import Foundation
import HTTPTypes
import HeraldCore
import HeraldHTTP
import Logging
import Synchronization

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
/// Backpressure: at most `maxInFlight` requests in flight (an ``InFlightGate``); one until the
/// first answer arrives.
///
/// The cost per delivery, on ``submit(_:timed:)``: no task, no actor hop, no
/// continuation: the access token is read from its cache under a lock, and the outcome is
/// classified and reported on the HTTP client's driver thread. A task is made only to fetch an
/// access token (about once an hour) or after a 401.
///
/// Thread rules: a `Sendable` class, not an actor: everything it holds is immutable or behind
/// its own lock, so no call needs to hop onto an executor. `send` and `submit` may be called
/// from anywhere, concurrently. Call ``shutdown()`` when done.
public final class FCMSender: PushSender, DispatchingSender {
    /// One project: its token provider (which holds the service account) and its send URL.
    private struct Project: Sendable {
        let tokens: FCMAccessTokenProvider
        let url: String
    }

    public let configuration: FCMConfiguration
    private let projects: [String: Project]
    private let defaultAlias: String
    private let client: HTTPClient
    private let gate: InFlightGate
    private let logger: Logger
    private let counters = Mutex(SenderStatistics())

    /// Validates the configuration (reading every service-account file) and starts the client.
    ///
    /// - Throws: ``SenderConfigurationError`` naming the file and the problem.
    public init(
        configuration: FCMConfiguration, clock: any ProviderClock = SystemProviderClock(), logger: Logger = Logger(label: "herald.fcm")
    ) throws(SenderConfigurationError) {
        let accounts = try configuration.load()
        let client: HTTPClient
        do {
            client = try HTTPClient(configuration: configuration.http, logger: logger)
        } catch {
            throw SenderConfigurationError(.invalidValue, problem: "cannot start the FCM HTTP client: \(error)")
        }
        self.configuration = configuration
        self.client = client
        self.logger = logger
        self.defaultAlias = accounts[0].alias
        self.gate = InFlightGate(limit: configuration.maxInFlight)
        let baseURL = configuration.effectiveBaseURL
        var projects: [String: Project] = [:]
        for (alias, account) in accounts {
            let tokens = FCMAccessTokenProvider(account: account, client: client, clock: clock, refreshMargin: configuration.tokenRefreshMargin, logger: logger)
            let url = baseURL + "/v1/projects/" + account.projectID.percentEncodedComponent + "/messages:send"
            projects[alias] = Project(tokens: tokens, url: url)
        }
        self.projects = projects
    }

    public func send(_ delivery: PushDelivery) async -> DeliveryOutcome { await sendThroughDispatch(delivery) }

    public func submit(_ deliveries: [PushDelivery], timed completion: @escaping @Sendable (Int, DeliveryOutcome, Duration?) -> Void) {
        submitThroughDispatch(deliveries, completion: completion)
    }

    /// Counters since the sender started.
    public var statistics: SenderStatistics {
        get async {
            var snapshot = counters.withLock { $0 }
            var fetched = 0
            for project in projects.values { fetched += await project.tokens.tokensFetched }
            snapshot.credentialsIssued = fetched
            snapshot.connectionsOpened = client.statistics.connectionsOpened
            return snapshot
        }
    }

    /// Stops the HTTP client; sends in flight end with `.retryAfter`.
    public func shutdown() async {
        await client.shutdown()
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
            if outcome != .sent { logger.debugRefusal("FCM did not accept a message", delivery: delivery, outcome: outcome) }
            completion(outcome, answerTime)
        }
        guard delivery.payload.platform == .android, delivery.payload.apns == nil else {
            finish(.permanentFailure(reason: "not an FCM payload (platform \(delivery.payload.platform))"), nil)
            return
        }
        let alias = delivery.target.app ?? defaultAlias
        guard let project = projects[alias] else {
            finish(.permanentFailure(reason: "no Firebase project configured for '\(alias.prefix(100))'"), nil)
            return
        }
        let request = HTTPClientRequest(
            method: .post, url: project.url, headerFields: [.contentType: "application/json; charset=UTF-8"], body: delivery.payload.body
        )
        gate.acquire { [self] in
            if abandoned?() == true {
                gate.release()
                return
            }
            transmit(request, to: project, refreshedCredential: false) { [self] outcome, answerTime in
                gate.release()
                finish(outcome, answerTime)
            }
        }
    }

    /// Sends `request` with the project's access token and classifies the answer, on the HTTP
    /// client's driver thread. A 401 drops the token once and the request is sent again.
    private func transmit(
        _ request: HTTPClientRequest, to project: Project, refreshedCredential: Bool,
        completion: @escaping @Sendable (DeliveryOutcome, Duration?) -> Void
    ) {
        guard let accessToken = project.tokens.cachedAccessToken() else {
            // No token yet, or it is about to expire: fetch one (a task, about once an hour).
            Task { [self] in
                do {
                    _ = try await project.tokens.accessToken()
                    transmit(request, to: project, refreshedCredential: refreshedCredential, completion: completion)
                } catch let error as FCMAccessTokenError {
                    completion(.retryAfter(nil, reason: "no access token: \(error.code)\(error.status.map { " \($0)" } ?? "")", providerFault: true), nil)
                } catch {
                    completion(.retryAfter(nil, reason: "no access token: \(type(of: error))", providerFault: true), nil)
                }
            }
            return
        }
        var authorized = request
        authorized.headerFields[.authorization] = "Bearer " + accessToken
        counters.withLock { $0.requests += 1 }
        client.submit(authorized) { [self] result in
            let response: HTTPClientResponse
            switch result {
            case .success(let answer): response = answer
            case .failure(let error):
                completion(FCMResponseClassifier.outcome(for: error), nil)
                return
            }
            gate.open()
            if response.status == .unauthorized, !refreshedCredential {
                counters.withLock { $0.credentialRetries += 1 }
                Task { [self] in
                    if await project.tokens.invalidate(accessToken) {
                        logger.notice("FCM refused the access token; fetching a new one", metadata: [LogKey.project: "\(project.tokens.account.projectID)"])
                    }
                    transmit(request, to: project, refreshedCredential: true, completion: completion)
                }
                return
            }
            completion(
                FCMResponseClassifier.outcome(status: response.status.code, body: response.body, headerFields: response.headerFields),
                response.answerTime)
        }
    }
}
