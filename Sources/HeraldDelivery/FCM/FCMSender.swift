import Foundation
import HeraldCore
import HeraldHTTP
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
/// Backpressure: at most `maxInFlight` requests in flight; one until the first answer arrives.
///
/// Thread rules: an actor; `send` may be called from many tasks at once. Call ``shutdown()``
/// when done.
public actor FCMSender: PushSender {
    struct Project {
        let account: FCMServiceAccount
        let tokens: FCMAccessTokenProvider
    }

    public nonisolated let configuration: FCMConfiguration
    private let projects: [String: Project]
    private let defaultAlias: String
    private let baseURL: String
    private let client: HTTPClient
    private let gate: InFlightGate
    private let logger: Logger
    private var counters = SenderStatistics()

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
        self.baseURL = configuration.effectiveBaseURL
        self.defaultAlias = accounts[0].alias
        self.gate = InFlightGate(limit: configuration.maxInFlight)
        var projects: [String: Project] = [:]
        for (alias, account) in accounts {
            let tokens = FCMAccessTokenProvider(account: account, client: client, clock: clock, refreshMargin: configuration.tokenRefreshMargin, logger: logger)
            projects[alias] = Project(account: account, tokens: tokens)
        }
        self.projects = projects
    }

    public func send(_ delivery: PushDelivery) async -> DeliveryOutcome {
        let outcome = await perform(delivery)
        counters.count(outcome.kind)
        if outcome != .sent { logger.debugRefusal("FCM did not accept a message", delivery: delivery, outcome: outcome) }
        return outcome
    }

    /// Counters since the sender started.
    public var statistics: SenderStatistics {
        get async {
            var snapshot = counters
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

    private func perform(_ delivery: PushDelivery) async -> DeliveryOutcome {
        guard delivery.payload.platform == .android, delivery.payload.apns == nil else {
            return .permanentFailure(reason: "not an FCM payload (platform \(delivery.payload.platform))")
        }
        let alias = delivery.target.app ?? defaultAlias
        guard let project = projects[alias] else {
            return .permanentFailure(reason: "no Firebase project configured for '\(alias.prefix(100))'")
        }
        guard await gate.acquire() else { return .retryAfter(nil, reason: "cancelled before sending") }
        defer { gate.release() }

        let url = baseURL + "/v1/projects/" + PercentEncoding.escape(project.account.projectID) + "/messages:send"
        var refreshedCredential = false
        while true {
            let accessToken: String
            do {
                accessToken = try await project.tokens.accessToken()
            } catch let error as FCMAccessTokenError {
                return .retryAfter(nil, reason: "no access token: \(error.code)\(error.status.map { " \($0)" } ?? "")")
            } catch {
                return .retryAfter(nil, reason: "no access token: \(type(of: error))")
            }
            let headers: HTTPHeaders = [
                "authorization": "Bearer " + accessToken,
                "content-type": "application/json; charset=UTF-8",
            ]
            counters.requests += 1
            let response: HTTPResponse
            do {
                response = try await client.execute(HTTPRequest(method: .post, url: url, headers: headers, body: delivery.payload.body))
            } catch {
                return FCMResponseClassifier.outcome(for: error)
            }
            gate.open()
            if response.status == 401, !refreshedCredential {
                refreshedCredential = true
                counters.credentialRetries += 1
                if await project.tokens.invalidate(accessToken) {
                    logger.notice("FCM refused the access token; fetching a new one", metadata: ["herald.project": "\(project.account.projectID)"])
                }
                continue
            }
            return FCMResponseClassifier.outcome(status: response.status, body: response.body, headers: response.headers)
        }
    }
}
