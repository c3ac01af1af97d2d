import Hummingbird
import Logging
import Metrics

/// Guards the operators' routes (`/v1/admin/…`) with the admin bearer key
/// (``AdminConfiguration/token``), compared in constant time.
///
/// 401 `unauthorized` without a bearer token; any other token goes to the app users'
/// ``Authenticator``: a valid app token is 403 `forbidden` (an app user never reads other
/// users' deliveries), an invalid one keeps its 401. Refusals are counted in
/// `herald_api_auth_failures_total{reason}` (`missing`, `not_admin`, the authenticator's).
struct AdminAuthenticationMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let token: String
    let authenticator: any Authenticator

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws -> Response {
        let bearer = try AuthenticationMiddleware.bearerToken(request)
        guard ConstantTime.equals(bearer, token) else {
            let identity = try await authenticator.authenticate(bearer: bearer)
            Counter(label: "herald_api_auth_failures_total", dimensions: [("reason", "not_admin")]).increment()
            context.logger.notice("An app user's token was refused on an admin route", metadata: ["herald.user_id": "\(identity.userId)"])
            throw APIError(.forbidden, "this route is for operators: it takes the admin key, not an app user's token")
        }
        return try await next(request, context)
    }
}
