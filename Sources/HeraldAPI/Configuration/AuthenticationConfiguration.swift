/// How bearer tokens are checked. A token with three dot-separated parts is a JWT (checked
/// with ``jwt``); any other is opaque (a GUID like seed 000's) and goes to ``introspection``.
/// With only one of them configured, every token goes there.
public struct AuthenticationConfiguration: Sendable {
    public var jwt: JWTConfiguration?
    public var introspection: IntrospectionConfiguration?

    public init(jwt: JWTConfiguration? = nil, introspection: IntrospectionConfiguration? = nil) {
        self.jwt = jwt
        self.introspection = introspection
    }

    func validate() throws(APIConfigurationError) {
        guard jwt != nil || introspection != nil else {
            throw APIConfigurationError("no bearer-token check configured: set a JWT key (api.jwt_secret or api.jwt_public_key_path) or api.introspection_url")
        }
        if let jwt {
            if case .hs256(let secret) = jwt.key, secret.count < 32 {
                throw APIConfigurationError("the HS256 secret must be at least 32 bytes")
            }
            guard jwt.leeway >= .zero, jwt.leeway <= .seconds(300) else { throw APIConfigurationError("JWT leeway must be between 0 and 300 seconds") }
        }
        if let introspection {
            let lower = introspection.url.lowercased()
            guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
                throw APIConfigurationError("the introspection URL must be http(s)")
            }
            guard introspection.cacheTTL >= .zero, introspection.cacheTTL <= .seconds(60) else {
                throw APIConfigurationError("the introspection cache TTL must be between 0 and 60 seconds")
            }
            guard introspection.timeout > .zero else { throw APIConfigurationError("the introspection timeout must be positive") }
        }
    }
}

/// Bearer JWTs: the key pins the algorithm (a token whose header names another `alg`, `none`
/// included, is refused). `sub` is the user id; optional `zone` and `branch` claims.
public struct JWTConfiguration: Sendable {
    public enum Key: Sendable {
        /// HS256 with a shared secret (at least 32 bytes).
        case hs256(secret: [UInt8])
        /// RS256 with an RSA public key (PEM, SubjectPublicKeyInfo or certificate).
        case rs256(publicKeyPEM: String)
        /// ES256 with a P-256 public key (PEM).
        case es256(publicKeyPEM: String)

        /// The `alg` header value this key accepts.
        public var algorithm: String {
            switch self {
            case .hs256: "HS256"
            case .rs256: "RS256"
            case .es256: "ES256"
            }
        }
    }

    public var key: Key
    /// Clock skew allowed on `exp` and `nbf`.
    public var leeway: Duration = .seconds(30)
    /// When set, `iss` must equal it.
    public var issuer: String?
    /// When set, `aud` must contain it.
    public var audience: String?

    public init(key: Key, leeway: Duration = .seconds(30), issuer: String? = nil, audience: String? = nil) {
        self.key = key
        self.leeway = leeway
        self.issuer = issuer
        self.audience = audience
    }
}

/// Opaque bearer tokens checked with an OAuth2 token introspection endpoint (RFC 7662).
public struct IntrospectionConfiguration: Sendable {
    public var url: String
    /// HTTP Basic credentials of this resource server at the endpoint (optional).
    public var clientId: String?
    public var clientSecret: String?
    /// How long an `active: true` answer is reused (never beyond the token's `exp`); at most 60 s.
    public var cacheTTL: Duration = .seconds(30)
    /// Longest wait for the endpoint; beyond it → 503 `auth_unavailable`.
    public var timeout: Duration = .seconds(5)
    /// Most answers kept in the cache.
    public var maxCachedTokens = 10_000

    public init(url: String, clientId: String? = nil, clientSecret: String? = nil) {
        self.url = url
        self.clientId = clientId
        self.clientSecret = clientSecret
    }
}
