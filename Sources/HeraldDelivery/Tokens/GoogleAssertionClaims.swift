import JWTKit

/// The claims of a Google service-account assertion (RFC 7523 JWT bearer grant): the account
/// (`iss`), the API scope, the token endpoint as audience, and a lifetime of one hour.
struct GoogleAssertionClaims: JWTPayload, Equatable {
    var iss: String
    var scope: String
    var aud: String
    var iat: Int
    var exp: Int

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
