import Hummingbird

/// Answers `405 method_not_allowed` with an `Allow` header when the path is one of the routes
/// but the method is not one of its methods (RFC 9110 §15.5.6): Hummingbird's router answers
/// 404 for both, which tells a client its URL is wrong when only its method is.
///
/// Added after every route, so that it wraps only the router's not-found responder and is
/// built from the complete route table.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    private let routes: [(path: RouterPath, methods: [HTTPRequest.Method])]

    init(routes: [Router<APIRequestContext>.RouteDescription]) {
        var methods: [String: (path: RouterPath, methods: [HTTPRequest.Method])] = [:]
        for route in routes {
            methods[route.path.description, default: (route.path, [])].methods.append(route.method)
        }
        self.routes = methods.values.sorted { $0.path.description < $1.path.description }
    }

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws -> Response {
        let segments = request.uri.path.split(separator: "/")
        let allowed = routes.filter { route in
            route.path.components.count == segments.count && zip(route.path.components, segments).allSatisfy { $0 ~= $1 }
        }.flatMap(\.methods).sorted { $0.rawValue < $1.rawValue }
        guard !allowed.isEmpty else { return try await next(request, context) }
        throw APIError(.methodNotAllowed, "this route takes \(allowed.map(\.rawValue).joined(separator: ", "))", allow: allowed)
    }
}
