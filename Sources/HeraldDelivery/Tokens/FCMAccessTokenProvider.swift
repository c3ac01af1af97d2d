import Foundation
import HTTPTypes
import HeraldCore
import HeraldHTTP
import JWTKit
import Logging

/// Obtains and caches the OAuth2 access token FCM requests carry, from a service account.
///
/// It signs an RS256 assertion (`iss` = the account's e-mail, `scope` = firebase.messaging,
/// `aud` = `token_uri`, `iat`, `exp` = `iat` + 3600, header `kid` = `private_key_id`), posts it
/// to `token_uri` as `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=…`, and
/// reuses the access token (a ``CachedCredential``) until ``refreshMargin`` before it expires.
/// Concurrent callers share one exchange: 1,000 sends at start-up fetch one token. Invalidating it
/// (``ProviderCredential``; FCM answered 401) drops the token once, however many requests saw the
/// 401.
///
/// Thread rules: an actor (its signing keys); the cache (a ``CachedCredential``) has its own
/// lock, so only a fetch hops onto it. Call it from anywhere. The clock is injectable for tests.
///
/// Errors: a refresh throws ``FCMAccessTokenError`` when the exchange fails.
public actor FCMAccessTokenProvider: ProviderCredential {
    /// The OAuth2 scope FCM HTTP v1 needs.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    public nonisolated let account: FCMServiceAccount
    public nonisolated let refreshMargin: Duration
    private let client: HTTPClient
    private nonisolated let clock: any ProviderClock
    private let logger: Logger
    private let keys = JWTKeyCollection()
    private var keysReady = false
    nonisolated let cache: CachedCredential<String>

    /// - Parameters:
    ///   - client: the HTTP client to reach `token_uri` with (the FCM sender's own).
    ///   - refreshMargin: fetch a new token this long before the current one expires.
    public init(
        account: FCMServiceAccount, client: HTTPClient, clock: any ProviderClock = SystemProviderClock(),
        refreshMargin: Duration = .seconds(300), logger: Logger = Logger(label: "herald.fcm.oauth")
    ) {
        self.account = account
        self.client = client
        self.clock = clock
        self.refreshMargin = refreshMargin
        self.logger = logger
        self.cache = CachedCredential(clock: clock, refreshMargin: refreshMargin)
    }

    /// A new access token from the token endpoint, with the lifetime Google gave it.
    ///
    /// - Throws: ``FCMAccessTokenError`` (the endpoint refused, answered nonsense, or could not be
    ///   reached), or `CancellationError`.
    func refresh() async throws -> CachedCredential<String>.Fresh {
        if !keysReady {
            await keys.add(rsa: account.privateKey, digestAlgorithm: .sha256, kid: account.privateKeyID.map { JWKIdentifier(string: $0) })
            keysReady = true
        }
        let now = clock.now()
        let iat = Int(now.timeIntervalSince1970.rounded(.down))
        let claims = GoogleAssertionClaims(iss: account.clientEmail, scope: Self.scope, aud: account.tokenURI, iat: iat, exp: iat + 3600)
        var header = JWTHeader()
        header.alg = "RS256"
        header.typ = "JWT"
        if let kid = account.privateKeyID { header.kid = kid }
        let assertion = try await keys.sign(claims, kid: account.privateKeyID.map { JWKIdentifier(string: $0) }, header: header)

        let body = "grant_type=" + "urn:ietf:params:oauth:grant-type:jwt-bearer".percentEncodedComponent + "&assertion=" + assertion.percentEncodedComponent
        let request = HTTPClientRequest(
            method: .post, url: account.tokenURI,
            headerFields: [.contentType: "application/x-www-form-urlencoded", .accept: "application/json"],
            body: Array(body.utf8)
        )
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request)
        } catch let error as HTTPClientError {
            throw FCMAccessTokenError(.unreachable, tokenURI: account.tokenURI, detail: error.description)
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard response.status == .ok else {
            let code = object?["error"] as? String ?? "status \(response.status.code)"
            let description = object?["error_description"] as? String
            logger.error(
                "OAuth2 token exchange refused",
                metadata: [LogKey.project: "\(account.projectID)", LogKey.status: "\(response.status.code)", LogKey.error: "\(code)"]
            )
            throw FCMAccessTokenError(
                .refused, tokenURI: account.tokenURI, status: response.status.code, detail: [code, description].compactMap { $0 }.joined(separator: ": "))
        }
        guard let token = object?["access_token"] as? String, !token.isEmpty else {
            throw FCMAccessTokenError(.invalidResponse, tokenURI: account.tokenURI, status: response.status.code, detail: "no access_token in the answer")
        }
        let lifetime = (object?["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        return .init(value: token, expiresAt: now.addingTimeInterval(lifetime))
    }
}
