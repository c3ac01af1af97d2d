/// Turns a bearer token into an ``Identity``.
///
/// Implementations are `Sendable` and safe from any number of tasks. They throw only
/// ``APIError``: `invalid_token` / `token_expired` (401) when the token is not acceptable,
/// `auth_unavailable` (503) when the authority cannot be asked.
public protocol Authenticator: Sendable {
    func authenticate(bearer token: String) async throws(APIError) -> Identity
}

/// Sends JWT-shaped tokens (three dot-separated parts) to one authenticator and the others
/// (opaque tokens such as seed 000's GUID) to another; either may be absent, and then every
/// token goes to the one that is present.
public struct BearerAuthenticator: Authenticator {
    public let jwt: (any Authenticator)?
    public let opaque: (any Authenticator)?

    public init(jwt: (any Authenticator)?, opaque: (any Authenticator)?) {
        self.jwt = jwt
        self.opaque = opaque
    }

    public func authenticate(bearer token: String) async throws(APIError) -> Identity {
        let looksLikeJWT = token.utf8.lazy.filter { $0 == UInt8(ascii: ".") }.count == 2
        guard let authenticator = (looksLikeJWT ? jwt ?? opaque : opaque ?? jwt) else {
            throw APIError(.invalidToken, "the bearer token is not acceptable")
        }
        return try await authenticator.authenticate(bearer: token)
    }
}
