import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// The outermost middleware: whatever a route or Hummingbird throws leaves as an ``APIError``
/// (so always `{"Error", "ErrorDescription"}`, never a stack trace, SQL or token). Hummingbird's
/// own errors keep their status (404, 405, 413…); anything unexpected becomes 500
/// `internal_error` and is logged with its full debug description.
struct APIErrorMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            log(error, context)
            throw error
        } catch let error as HTTPError {
            let mapped = Self.map(error)
            log(mapped, context)
            throw mapped
        } catch {
            let mapped = APIError(.internalError, "internal error", underlying: error)
            log(mapped, context)
            throw mapped
        }
    }

    static func map(_ error: HTTPError) -> APIError {
        switch error.status {
        case .notFound: APIError(.notFound, "no such route")
        case .methodNotAllowed: APIError(.methodNotAllowed, "this route does not accept this method")
        case .contentTooLarge: APIError(.bodyTooLarge, "the request body is too large")
        case .badRequest: APIError(.invalidJSON, "the request is not valid")
        case .unauthorized: APIError(.unauthorized, "authentication is required")
        default:
            error.status.code >= 500
                ? APIError(.internalError, "internal error", underlying: error)
                : APIError(APIError.Code("http_\(error.status.code)", status: error.status), error.status.reasonPhrase)
        }
    }

    private func log(_ error: APIError, _ context: APIRequestContext) {
        if error.code.status == .internalServerError {
            context.logger.error("Request failed", metadata: [LogKey.error: "\(error.debugDescription)"])
        } else if error.code.status.code >= 500 {
            context.logger.warning("Request failed", metadata: [LogKey.error: "\(error.debugDescription)"])
        } else {
            context.logger.debug("Request refused", metadata: [LogKey.error: "\(error)"])
        }
    }
}
