import HTTPTypes
import HeraldCore
import HeraldHTTP
import Logging

/// What FCM adds to the shared sending path (``ProviderSender``): `POST
/// /v1/projects/<project>/messages:send` for the device's project with that project's access
/// token; Google's answer read by ``FCMResponseClassifier``; a 401 refuses the token.
struct FCMProvider: PushProvider {
    /// One project: its token provider (which holds the service account) and its send URL.
    struct Project: Sendable {
        let tokens: FCMAccessTokenProvider
        let url: String
    }

    /// That FCM answered 401: the access token is refused.
    struct Unauthorized: Sendable {}

    static var notAccepted: Logger.Message { "FCM did not accept a message" }
    static var authorizationScheme: String { "Bearer " }
    static let contentType: HTTPFields = [.contentType: "application/json; charset=UTF-8"]

    let projects: [String: Project]
    let defaultAlias: String
    let client: HTTPClient

    var clients: [HTTPClient] { [client] }
    var credentials: [FCMAccessTokenProvider] { projects.values.map(\.tokens) }

    /// Starts the client the sends and the token exchanges share, and a token provider per
    /// project.
    init(
        configuration: FCMConfiguration, accounts: [(alias: String, account: FCMServiceAccount)], clock: any ProviderClock, logger: Logger
    )
        throws(SenderConfigurationError)
    {
        client = try HTTPClient.forProvider("FCM", configuration: configuration.http, logger: logger)
        defaultAlias = accounts[0].alias
        let baseURL = configuration.effectiveBaseURL
        var projects: [String: Project] = [:]
        for (alias, account) in accounts {
            let tokens = FCMAccessTokenProvider(account: account, client: client, clock: clock, refreshMargin: configuration.tokenRefreshMargin, logger: logger)
            let url = baseURL + "/v1/projects/" + account.projectID.percentEncodedComponent + "/messages:send"
            projects[alias] = Project(tokens: tokens, url: url)
        }
        self.projects = projects
    }

    func prepare(_ delivery: PushDelivery) -> Preparation<ProviderRequest<FCMAccessTokenProvider>> {
        guard delivery.payload.platform == .android, delivery.payload.apns == nil else {
            return .refused(.permanentFailure(reason: "not an FCM payload (platform \(delivery.payload.platform))"))
        }
        let alias = delivery.target.app ?? defaultAlias
        guard let project = projects[alias] else {
            return .refused(.permanentFailure(reason: "no Firebase project configured for '\(alias.prefix(100))'"))
        }
        let request = HTTPClientRequest(method: .post, url: project.url, headerFields: Self.contentType, body: delivery.payload.body)
        return .ready(ProviderRequest(request: request, client: client, credential: project.tokens))
    }

    func outcome(credentialError error: any Error, logger: Logger) -> DeliveryOutcome {
        if let error = error as? FCMAccessTokenError {
            return .retryAfter(nil, reason: "no access token: \(error.code)\(error.status.map { " \($0)" } ?? "")", providerFault: true)
        }
        return .retryAfter(nil, reason: "no access token: \(type(of: error))", providerFault: true)
    }

    func credentialRefusal(in response: HTTPClientResponse) -> Unauthorized? {
        response.status == .unauthorized ? Unauthorized() : nil
    }

    func logInvalidated(_ credential: FCMAccessTokenProvider, after refusal: Unauthorized, logger: Logger) {
        logger.notice("FCM refused the access token; fetching a new one", metadata: [LogKey.project: "\(credential.account.projectID)"])
    }

    /// A 401 for a new token too is classified like any answer (`.retryAfter`), nothing more.
    func logRefusedAgain(_ credential: FCMAccessTokenProvider, refusal: Unauthorized, logger: Logger) {}

    func outcome(of response: HTTPClientResponse) -> DeliveryOutcome {
        FCMResponseClassifier.outcome(status: response.status.code, body: response.body, headerFields: response.headerFields)
    }

    func outcome(of error: any Error) -> DeliveryOutcome { FCMResponseClassifier.outcome(for: error) }
}
