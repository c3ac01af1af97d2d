import Foundation
import JWTKit

/// The claims HeraldAPI reads from a bearer JWT: `sub` (the user id, required), `exp`
/// (required), `nbf`, `iss`, `aud`, and Herald's own optional `zone` and `branch`. Time claims
/// are checked by ``JWTVerifier`` with its leeway and clock, so ``verify(using:)`` does nothing.
struct JWTClaims: JWTPayload {
    var sub: SubjectClaim?
    var exp: ExpirationClaim?
    var nbf: NotBeforeClaim?
    var iss: IssuerClaim?
    var aud: AudienceClaim?
    var zone: String?
    var branch: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
