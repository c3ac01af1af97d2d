import Foundation
import HeraldCore
import JWTKit

/// Checks bearer JWTs with one configured key (HS256, RS256 or ES256).
///
/// The algorithm is pinned: the token's `alg` header must be the key's (`none`, and HS256
/// tokens against an RSA key, are refused before any signature work). Then the signature,
/// `exp` (required) and `nbf` with ``JWTConfiguration/leeway``, `iss`/`aud` when configured,
/// and `sub` (the user id). Throws ``APIError``: `invalid_token` or `token_expired`. Safe from
/// any number of tasks (jwt-kit's key collection is an actor).
public struct JWTVerifier: Authenticator {
    private let keys: JWTKeyCollection
    private let configuration: JWTConfiguration
    private let now: @Sendable () -> Date

    /// - Throws: ``APIConfigurationError`` when the key does not parse.
    public init(configuration: JWTConfiguration, now: @escaping @Sendable () -> Date = { Date() }) async throws(APIConfigurationError) {
        let keys = JWTKeyCollection()
        do {
            switch configuration.key {
            case .hs256(let secret):
                await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            case .rs256(let pem):
                await keys.add(rsa: try Insecure.RSA.PublicKey(pem: pem), digestAlgorithm: .sha256)
            case .es256(let pem):
                await keys.add(ecdsa: try ES256PublicKey(pem: pem))
            }
        } catch {
            throw APIConfigurationError("the \(configuration.key.algorithm) public key does not parse as PEM: \(error)")
        }
        self.keys = keys
        self.configuration = configuration
        self.now = now
    }

    public func authenticate(bearer token: String) async throws(APIError) -> Identity {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.decodeHeader(parts[0]) else {
            throw APIError.authentication(.invalidToken, "the bearer token is not a well-formed JWT", reason: "malformed")
        }
        guard header.alg == configuration.key.algorithm else {
            throw APIError.authentication(.invalidToken, "the bearer token's algorithm is not accepted", reason: "algorithm")
        }
        let claims: JWTClaims
        do {
            claims = try await keys.verify(token, as: JWTClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw APIError.authentication(.invalidToken, "the bearer token's signature is not valid", reason: "signature")
        } catch {
            throw APIError.authentication(.invalidToken, "the bearer token is not a well-formed JWT", reason: "malformed")
        }
        let now = now()
        let leeway = configuration.leeway.seconds
        guard let exp = claims.exp?.value else {
            throw APIError.authentication(.invalidToken, "the bearer token has no exp claim", reason: "claims")
        }
        guard now.timeIntervalSince(exp) <= leeway else {
            throw APIError.authentication(.tokenExpired, "the bearer token has expired", reason: "expired")
        }
        if let nbf = claims.nbf?.value, nbf.timeIntervalSince(now) > leeway {
            throw APIError.authentication(.tokenExpired, "the bearer token is not valid yet", reason: "not_yet_valid")
        }
        if let issuer = configuration.issuer, claims.iss?.value != issuer {
            throw APIError.authentication(.invalidToken, "the bearer token's issuer is not accepted", reason: "claims")
        }
        if let audience = configuration.audience, !(claims.aud?.value.contains(audience) ?? false) {
            throw APIError.authentication(.invalidToken, "the bearer token's audience is not accepted", reason: "claims")
        }
        guard let identity = Identity.from(subject: claims.sub?.value, zone: claims.zone, branch: claims.branch) else {
            throw APIError.authentication(.invalidToken, "the bearer token has no acceptable sub, zone or branch claim", reason: "claims")
        }
        return identity
    }

    /// The key for a PEM public key, RS256 or ES256 by the key's type.
    /// - Throws: ``APIConfigurationError`` when it is neither an RSA nor a P-256 public key.
    public static func key(publicKeyPEM pem: String) throws(APIConfigurationError) -> JWTConfiguration.Key {
        if (try? ES256PublicKey(pem: pem)) != nil { return .es256(publicKeyPEM: pem) }
        if (try? Insecure.RSA.PublicKey(pem: pem)) != nil { return .rs256(publicKeyPEM: pem) }
        throw APIConfigurationError("the JWT public key is neither an RSA nor a P-256 (ES256) public key in PEM")
    }

    private struct Header: Decodable {
        var alg: String
    }

    private static func decodeHeader(_ segment: Substring) -> Header? {
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONDecoder().decode(Header.self, from: data)
    }
}
