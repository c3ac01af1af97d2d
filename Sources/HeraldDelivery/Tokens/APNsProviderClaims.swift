import JWTKit

/// The claims of an APNs provider token: `iss` (the team id) and `iat` (whole seconds since
/// 1970), nothing else, as Apple documents.
struct APNsProviderClaims: JWTPayload, Equatable {
    var iss: String
    var iat: Int

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
