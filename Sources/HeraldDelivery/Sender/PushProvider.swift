import HeraldCore
import HeraldHTTP
import Logging

/// What one provider's HTTP API (APNs, FCM) adds to the sending path ``ProviderSender`` runs
/// for both: how a delivery becomes a request and which client and credential carry it, what
/// an answer means, and what to log about a credential. The rest — the in-flight gate, the
/// counters, the one retry with a new credential, the answer time — is the core's.
///
/// Thread rules: `Sendable`, immutable after start; called from any thread.
protocol PushProvider: Sendable {
    /// Where requests get their credential (a token provider).
    associatedtype Credential: ProviderCredential
    /// Why the provider refused a credential (Apple's reason; for FCM, that it answered 401).
    associatedtype CredentialRefusal: Sendable

    /// The debug line for an answer other than `.sent`.
    static var notAccepted: Logger.Message { get }
    /// What precedes the credential in the `authorization` header.
    static var authorizationScheme: String { get }

    /// Every client the provider sends through: their connections are counted and shut down.
    var clients: [HTTPClient] { get }
    /// Every credential: their refreshes are counted.
    var credentials: [Credential] { get }

    /// The request for `delivery` with its client and credential, or why it cannot be sent.
    func prepare(_ delivery: PushDelivery) -> Preparation<ProviderRequest<Credential>>
    /// The outcome of a send for which no credential could be made; logs what the operator
    /// must know.
    func outcome(credentialError error: any Error, logger: Logger) -> DeliveryOutcome
    /// Why `response` refuses the credential the request carried, or nil when it does not.
    func credentialRefusal(in response: HTTPClientResponse) -> CredentialRefusal?
    /// Logs that `refusal` invalidated `credential`'s current value.
    func logInvalidated(_ credential: Credential, after refusal: CredentialRefusal, logger: Logger)
    /// Logs that the provider refused the new credential too (the request is not tried again).
    func logRefusedAgain(_ credential: Credential, refusal: CredentialRefusal, logger: Logger)
    /// The outcome of an answer.
    func outcome(of response: HTTPClientResponse) -> DeliveryOutcome
    /// The outcome of a request that got no answer.
    func outcome(of error: any Error) -> DeliveryOutcome
}

/// A delivery made ready by its ``PushProvider``: the request without its credential, the
/// client that carries it, and the credential to attach (`nil`: none, an APNs app with a
/// client certificate).
struct ProviderRequest<Credential: Sendable>: Sendable {
    let request: HTTPClientRequest
    let client: HTTPClient
    let credential: Credential?
}

extension HTTPClient {
    /// Starts a provider's HTTP client, naming the provider if it cannot.
    static func forProvider(_ name: String, configuration: HTTPClientConfiguration, logger: Logger) throws(SenderConfigurationError) -> HTTPClient {
        do {
            return try HTTPClient(configuration: configuration, logger: logger)
        } catch {
            throw SenderConfigurationError(.invalidValue, problem: "cannot start the \(name) HTTP client: \(error)")
        }
    }
}
