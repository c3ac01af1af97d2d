import Foundation
import HTTPTypes
import HeraldCore
import HeraldHTTP
import Logging

/// What APNs adds to the shared sending path (``ProviderSender``): `POST /3/device/<token>`
/// with Apple's headers, through the app's client, with the provider token for token apps;
/// Apple's answer read by ``APNsResponseClassifier``; a 403 `ExpiredProviderToken` or
/// `InvalidProviderToken` refuses the token.
struct APNsProvider: PushProvider {
    /// How one app is reached: its client, and the provider token when it signs requests with
    /// one (`nil`: its client certificate authenticates it).
    struct Route: Sendable {
        let client: HTTPClient
        let tokens: APNsTokenProvider?
    }

    static let topicField = HTTPField.Name("apns-topic")!
    static let pushTypeField = HTTPField.Name("apns-push-type")!
    static let priorityField = HTTPField.Name("apns-priority")!
    static let expirationField = HTTPField.Name("apns-expiration")!
    static let collapseIDField = HTTPField.Name("apns-collapse-id")!
    static let idField = HTTPField.Name("apns-id")!

    static var notAccepted: Logger.Message { "APNs did not accept a notification" }
    static var authorizationScheme: String { "bearer " }

    let apps: [String: Route]
    let defaultTopic: String
    let baseURL: String
    let clients: [HTTPClient]
    let tokenProvider: APNsTokenProvider?

    var credentials: [APNsTokenProvider] { tokenProvider.map { [$0] } ?? [] }

    /// Starts a client for the provider token (when there is a signing key) and one per app
    /// with a client certificate.
    init(configuration: APNsConfiguration, signingKey: APNsSigningKey?, clock: any ProviderClock, logger: Logger) throws(SenderConfigurationError) {
        baseURL = configuration.effectiveBaseURL
        defaultTopic = configuration.apps[0].topic
        var clients: [HTTPClient] = []
        var tokenRoute: Route?
        if let signingKey {
            let client = try HTTPClient.forProvider("APNs", configuration: configuration.http, logger: logger)
            clients.append(client)
            let tokens = APNsTokenProvider(key: signingKey, clock: clock, refreshInterval: configuration.tokenRefreshInterval)
            tokenRoute = Route(client: client, tokens: tokens)
        }
        tokenProvider = tokenRoute?.tokens
        var apps: [String: Route] = [:]
        for app in configuration.apps {
            if let certificate = app.certificate {
                var http = configuration.http
                http.tls.clientCertificate = certificate.clientCertificate
                let client = try HTTPClient.forProvider("APNs", configuration: http, logger: logger)
                clients.append(client)
                apps[app.topic] = Route(client: client, tokens: nil)
            } else if let tokenRoute {
                apps[app.topic] = tokenRoute
            }
        }
        self.apps = apps
        self.clients = clients
    }

    func prepare(_ delivery: PushDelivery) -> Preparation<ProviderRequest<APNsTokenProvider>> {
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
        let request = HTTPClientRequest(method: .post, url: url, headerFields: fields, body: delivery.payload.body)
        return .ready(ProviderRequest(request: request, client: route.client, credential: route.tokens))
    }

    func outcome(credentialError error: any Error, logger: Logger) -> DeliveryOutcome {
        logger.error("cannot sign an APNs provider token", metadata: [LogKey.error: "\(error)"])
        return .retryAfter(nil, reason: "cannot sign a provider token")
    }

    func credentialRefusal(in response: HTTPClientResponse) -> APNsReason? {
        guard response.status == .forbidden, let reason = APNsResponseClassifier.reason(in: response.body), reason.requiresNewProviderToken else {
            return nil
        }
        return reason
    }

    func logInvalidated(_ credential: APNsTokenProvider, after reason: APNsReason, logger: Logger) {
        logger.notice("APNs refused the provider token; making a new one", metadata: [LogKey.reason: "\(reason)"])
    }

    func logRefusedAgain(_ credential: APNsTokenProvider, refusal reason: APNsReason, logger: Logger) {
        guard reason == .invalidProviderToken else { return }
        logger.error(
            "APNs refuses the provider token even after a new one was made: check apns.key_id, apns.team_id and the .p8 key",
            metadata: [LogKey.keyId: "\(credential.key.keyID)", LogKey.teamId: "\(credential.key.teamID)"]
        )
    }

    func outcome(of response: HTTPClientResponse) -> DeliveryOutcome {
        APNsResponseClassifier.outcome(status: response.status.code, body: response.body, headerFields: response.headerFields)
    }

    func outcome(of error: any Error) -> DeliveryOutcome { APNsResponseClassifier.outcome(for: error) }
}
