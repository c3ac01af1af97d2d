import Foundation
import HeraldCore
import Hummingbird
import Logging
import Metrics

/// Authenticates the bearer token of every request it wraps (→ ``APIRequestContext/identity``)
/// and then applies the caller's rate limit.
///
/// 401 `unauthorized` without `Authorization: Bearer <token>` (scheme in any case; tokens
/// longer than 8 KB are refused unread); the ``Authenticator``'s errors as they are; 429
/// `rate_limited` with `Retry-After` when the user's bucket is empty.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let authenticator: any Authenticator
    let limiter: TokenBucketLimiter?

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws -> Response {
        let token = try Self.bearerToken(request)
        var context = context
        let identity = try await authenticator.authenticate(bearer: token)
        context.identity = identity
        context.logger[metadataKey: LogKey.userId] = "\(identity.userId)"
        if let limiter, let wait = limiter.acquire(identity.userId) {
            Counter(label: "herald_api_rate_limited_total").increment()
            let seconds = max(1, Int(wait.seconds.rounded(.up)))
            throw APIError(.rateLimited, "too many requests; try again in \(seconds) s", retryAfterSeconds: seconds)
        }
        return try await next(request, context)
    }

    /// The token of `Authorization: Bearer <token>`, or 401 `unauthorized`.
    static func bearerToken(_ request: Request) throws(APIError) -> String {
        guard let header = request.headers[.authorization], header.count <= 8192 + 7,
            header.prefix(7).lowercased() == "bearer ", case let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces), !token.isEmpty
        else {
            throw APIError.authentication(.unauthorized, "an 'Authorization: Bearer <token>' header is required", reason: "missing")
        }
        return token
    }
}
