import Crypto
import Foundation
import HeraldCore
import Logging
import Metrics
import Synchronization

/// Checks opaque bearer tokens with an OAuth2 token introspection endpoint (RFC 7662).
///
/// `active: true` answers are cached for ``IntrospectionConfiguration/cacheTTL`` (at most 60 s)
/// and never beyond the token's `exp`; the cache is keyed by the token's SHA-256, bounded, and
/// holds no negative answers. The endpoint being unreachable, slow, or answering anything but
/// 200 with a JSON object → 503 `auth_unavailable` (the client is not at fault); `active:
/// false` → 401 `invalid_token`; an expired `exp` → 401 `token_expired`. Thread-safe (the
/// cache is behind a `Mutex`).
public final class TokenIntrospector: Authenticator {
    private let configuration: IntrospectionConfiguration
    private let transport: any IntrospectionTransport
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let cache = Mutex<[String: Entry]>([:])

    private struct Entry {
        var identity: Identity
        var expiresAt: Date
    }

    public init(
        configuration: IntrospectionConfiguration, transport: any IntrospectionTransport, logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.transport = transport
        self.logger = logger
        self.now = now
    }

    public func authenticate(bearer token: String) async throws(APIError) -> Identity {
        let key = SHA256.hexDigest(Array(token.utf8))
        let now = now()
        if let hit = cache.withLock({ $0[key] }), hit.expiresAt > now {
            return hit.identity
        }
        let answer = try await introspect(token)
        guard answer.active == true else {
            throw APIError.authentication(.invalidToken, "the bearer token is not active", reason: "inactive")
        }
        var expiresAt = now.addingTimeInterval(configuration.cacheTTL.seconds)
        if let exp = answer.exp {
            let expiry = Date(timeIntervalSince1970: exp)
            guard expiry > now else { throw APIError.authentication(.tokenExpired, "the bearer token has expired", reason: "expired") }
            expiresAt = min(expiresAt, expiry)
        }
        guard let identity = Identity.from(subject: answer.sub, zone: answer.zone, branch: answer.branch) else {
            throw APIError.authentication(.invalidToken, "the introspection answer has no acceptable sub, zone or branch", reason: "claims")
        }
        if expiresAt > now {
            cache.withLock { cache in
                if cache.count >= configuration.maxCachedTokens {
                    cache = cache.filter { $0.value.expiresAt > now }
                    if cache.count >= configuration.maxCachedTokens { cache.removeAll() }
                }
                cache[key] = Entry(identity: identity, expiresAt: expiresAt)
            }
        }
        return identity
    }

    /// The fields of RFC 7662 §2.2 Herald reads, plus `zone` and `branch`.
    struct Answer: Decodable {
        var active: Bool?
        var sub: String?
        var exp: Double?
        var zone: String?
        var branch: String?
    }

    private func introspect(_ token: String) async throws(APIError) -> Answer {
        var headers = [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")]
        if let id = configuration.clientId {
            let credentials = Self.formEncode(id) + ":" + Self.formEncode(configuration.clientSecret ?? "")
            headers.append(("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()))
        }
        let body = Array("token=\(Self.formEncode(token))&token_type_hint=access_token".utf8)
        let response: IntrospectionHTTPResponse
        do {
            response = try await transport.post(url: configuration.url, headers: headers, body: body, timeout: configuration.timeout)
        } catch {
            Counter(label: "herald_api_introspection_errors_total", dimensions: [("reason", "transport")]).increment()
            logger.warning("Token introspection endpoint unreachable", metadata: [LogKey.error: "\(error)"])
            throw APIError(.authUnavailable, "the token introspection endpoint is unavailable", retryAfterSeconds: 5, underlying: error)
        }
        guard response.status == 200, let answer = try? JSONDecoder().decode(Answer.self, from: Data(response.body)) else {
            Counter(label: "herald_api_introspection_errors_total", dimensions: [("reason", "status_\(response.status)")]).increment()
            logger.warning("Token introspection endpoint answered badly", metadata: [LogKey.status: "\(response.status)"])
            throw APIError(.authUnavailable, "the token introspection endpoint answered with an error", retryAfterSeconds: 5)
        }
        return answer
    }

    /// `application/x-www-form-urlencoded` (RFC 6749 §2.3.1 for the credentials too).
    static func formEncode(_ value: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
