import Foundation
import JWTKit
import Synchronization

/// A local stand-in for Google's OAuth2 token endpoint (`token_uri` of the sandbox's
/// service-account file), for the JWT-bearer grant service accounts use.
///
/// It checks what Google checks — form `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`
/// (else 400 `unsupported_grant_type`), an RS256 assertion whose signature verifies with the
/// service account's public key and whose `kid` is its `private_key_id`, `iss` = the account's
/// e-mail, `aud` = the token endpoint, `iat`/`exp` at most an hour apart and around now (else
/// 400 `invalid_grant`), a `scope` including firebase.messaging (else 400 `invalid_scope`) —
/// and answers `{"access_token":…,"expires_in":3599,"token_type":"Bearer"}`.
///
/// Thread rules: `Sendable`.
public final class GoogleOAuthStandIn: Sendable {
    struct Claims: JWTPayload {
        var iss: String?
        var scope: String?
        var aud: String?
        var iat: Int?
        var exp: Int?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    public let clientEmail: String
    public let privateKeyID: String
    /// The audience assertions must name: the token endpoint's URL.
    public let audience: String
    public let accessTokenLifetime: Int
    private let publicKey: Insecure.RSA.PublicKey
    private let keys = JWTKeyCollection()
    private let keyAdded = Mutex(false)
    private let issued = Mutex<[String: Date]>([:])
    private let issuedCount = Mutex(0)
    private let clock: @Sendable () -> Date

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    init(
        clientEmail: String, privateKeyID: String, audience: String, publicKey: Insecure.RSA.PublicKey, accessTokenLifetime: Int,
        clock: @escaping @Sendable () -> Date
    ) {
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        self.audience = audience
        self.publicKey = publicKey
        self.accessTokenLifetime = accessTokenLifetime
        self.clock = clock
    }

    /// Access tokens issued so far.
    public var accessTokensIssued: Int { issuedCount.withLock { $0 } }

    /// Forgets every access token: the next FCM request with one gets 401 `UNAUTHENTICATED`.
    public func revokeAccessTokens() {
        issued.withLock { $0.removeAll() }
    }

    /// Whether `token` is a live access token.
    func isValid(_ token: String) -> Bool {
        let now = clock()
        return issued.withLock { $0[token].map { now < $0 } ?? false }
    }

    func handle(_ request: ServerRequest) async -> ServerResponse {
        guard request.method == "POST" else {
            return GoogleErrorBody.oauth(status: 405, error: "invalid_request", description: "Method not allowed; POST the form.")
        }
        let form = Self.parseForm(request.bodyText)
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return GoogleErrorBody.oauth(error: "unsupported_grant_type", description: "Invalid grant_type: \(form["grant_type"] ?? "")")
        }
        guard let assertion = form["assertion"], !assertion.isEmpty else {
            return GoogleErrorBody.oauth(error: "invalid_request", description: "Missing required parameter: assertion")
        }
        let segments = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let headerBytes = Base64URL.decode(String(segments[0])),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any]
        else {
            return GoogleErrorBody.oauth(error: "invalid_grant", description: "Invalid JWT: the assertion is not a JWT.")
        }
        guard header["alg"] as? String == "RS256", header["kid"] as? String == privateKeyID else {
            return GoogleErrorBody.oauth(error: "invalid_grant", description: "Invalid JWT Signature.")
        }
        if !keyAdded.withLock({ $0 }) {
            await keys.add(rsa: publicKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: privateKeyID))
            keyAdded.withLock { $0 = true }
        }
        let claims: Claims
        do {
            claims = try await keys.verify(assertion, as: Claims.self)
        } catch {
            return GoogleErrorBody.oauth(error: "invalid_grant", description: "Invalid JWT Signature.")
        }
        guard claims.iss == clientEmail else {
            return GoogleErrorBody.oauth(error: "invalid_grant", description: "Invalid JWT: the issuer is not the service account.")
        }
        guard claims.aud == audience else {
            return GoogleErrorBody.oauth(error: "invalid_grant", description: "Invalid JWT: Failed audience check. The right audience is \(audience)")
        }
        let now = Int(clock().timeIntervalSince1970)
        guard let iat = claims.iat, let exp = claims.exp, exp > iat, exp - iat <= 3600, iat <= now + 300, exp > now - 300 else {
            return GoogleErrorBody.oauth(
                error: "invalid_grant",
                description:
                    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
            )
        }
        let scopes = (claims.scope ?? "").split(separator: " ").map(String.init)
        guard scopes.contains(Self.scope) || scopes.contains("https://www.googleapis.com/auth/cloud-platform") else {
            return GoogleErrorBody.oauth(error: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided.")
        }
        let token = "ya29.sandbox." + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        issued.withLock { $0[token] = clock().addingTimeInterval(TimeInterval(accessTokenLifetime)) }
        issuedCount.withLock { $0 += 1 }
        let body = GoogleErrorBody.encode(["access_token": token, "expires_in": accessTokenLifetime, "token_type": "Bearer"])
        return .json(body, headers: [("cache-control", "no-cache, no-store, max-age=0, must-revalidate")])
    }

    /// `application/x-www-form-urlencoded` into a dictionary (last value wins).
    static func parseForm(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }
}
