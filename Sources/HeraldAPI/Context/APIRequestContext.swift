import Hummingbird

/// The request context of every HeraldAPI route: Hummingbird's core storage plus the caller's
/// ``Identity``, set by ``AuthenticationMiddleware`` on the authenticated routes.
public struct APIRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: Identity?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.identity = nil
    }

    /// The caller; a route outside ``AuthenticationMiddleware`` has none (a wiring bug → 500).
    func requireIdentity() throws(APIError) -> Identity {
        guard let identity else { throw APIError(.internalError, "the route is not authenticated") }
        return identity
    }
}
