import Foundation
import HeraldStore
import Hummingbird
import Logging

/// Builds HeraldAPI's router and application. `herald api` runs the application alone;
/// `herald serve` runs the same application next to the worker in one `ServiceGroup` (the
/// application is a swift-service-lifecycle `Service`).
///
/// Routes (docs/api.md, docs/openapi.yaml):
/// - `POST <legacyBasePath>/Subscribe.ashx`, `POST <legacyBasePath>/Unsubscribe.ashx`
/// - `PUT|GET|DELETE /v1/devices/{deviceId}`, `GET|PUT /v1/me/settings`,
///   `GET /v1/devices/{deviceId}/notifications`, `POST /v1/devices/{deviceId}/notifications/resend`
/// - `PUT /v1/devices/{deviceId}/read`
/// - operators, with ``APIConfiguration/admin``: `GET /v1/admin/messages/{messageId}`,
///   `GET /v1/admin/users/{userId}/deliveries`
/// - `GET /healthz`, `GET /readyz`, `GET /metrics`
public enum APIServer {
    /// The router with every route and middleware. Throws ``APIConfigurationError``.
    public static func makeRouter(configuration: APIConfiguration, dependencies: APIDependencies) throws(APIConfigurationError) -> Router<APIRequestContext> {
        try configuration.validate()
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: APIErrorMiddleware())

        let validator = RequestValidator(limits: configuration.limits)
        let service = DeviceService(store: dependencies.store)
        let authentication = AuthenticationMiddleware(
            authenticator: dependencies.authenticator, limiter: configuration.rateLimit.map { TokenBucketLimiter(configuration: $0) }
        )
        let maxBody = configuration.maxBodyBytes

        HealthRoutes(store: dependencies.store, checks: dependencies.readinessChecks, metrics: dependencies.metrics).register(on: router)
        LegacyRoutes(service: service, validator: validator, maxBodyBytes: maxBody)
            .register(on: router, basePath: configuration.legacyBasePath, authentication: authentication)

        let v1 = router.group("v1").add(middleware: authentication)
        DeviceRoutes(service: service, validator: validator, maxBodyBytes: maxBody).register(on: v1)
        SettingsRoutes(store: dependencies.store, validator: validator, maxBodyBytes: maxBody).register(on: v1)
        NotificationRoutes(
            service: service, store: dependencies.store, validator: validator, maxBodyBytes: maxBody,
            planner: ResendPlanner(configuration: configuration.resend), resendHandler: dependencies.resendHandler,
            logger: dependencies.logger, now: dependencies.now, badgeSync: configuration.badgeSync
        ).register(on: v1)
        if let admin = configuration.admin {
            let operators = router.group("v1/admin").add(
                middleware: AdminAuthenticationMiddleware(token: admin.token, authenticator: dependencies.authenticator))
            AdminRoutes(store: dependencies.store, configuration: admin, now: dependencies.now).register(on: operators)
        }
        // Last: it only wraps the not-found responder, and needs every route.
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
        return router
    }

    /// The HTTP/1.1 application listening on ``APIConfiguration/host``:``APIConfiguration/port``.
    /// `onServerRunning` receives the bound port (useful with port 0). Run it with
    /// `runService()` alone, or add it to a `ServiceGroup`.
    public static func makeApplication(
        configuration: APIConfiguration, dependencies: APIDependencies, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws(APIConfigurationError) -> some ApplicationProtocol {
        let router = try makeRouter(configuration: configuration, dependencies: dependencies)
        return Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "herald"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: dependencies.logger
        )
    }

    /// Only `/healthz`, `/readyz` and `/metrics`, for a process without the REST API
    /// (`herald worker` with `worker.metrics_listen`): the same semantics as the API's, so one
    /// probe and one scrape configuration fit every Herald process.
    public static func makeOperationsApplication(
        host: String, port: Int, store: Store, readinessChecks: [String: APIDependencies.ReadinessCheck],
        metrics: @escaping @Sendable () -> [UInt8], logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: APIErrorMiddleware())
        HealthRoutes(store: store, checks: readinessChecks, metrics: metrics).register(on: router)
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "herald"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }
}
