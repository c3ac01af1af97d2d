import Foundation
import HeraldAPI
import HeraldCore
import HeraldDelivery
import HeraldHTTP
import HeraldStore
import HeraldWorker
import Hummingbird
import Logging

/// Builds HeraldAPI's configuration and application from `herald`'s settings: the one entry
/// point of `herald api`, and what `herald serve` calls to run the API next to the worker.
///
/// Keys read: `api.listen` (`host:port`, default `127.0.0.1:8080`), `api.legacy_base_path`,
/// `api.max_body_bytes`, `api.rate_limit_per_second` (0 disables), `api.rate_limit_burst`;
/// bearer tokens: `api.jwt_secret` (HS256) or `api.jwt_public_key_path` (RS256 or ES256 PEM,
/// detected), `api.jwt_leeway`, `api.jwt_issuer`, `api.jwt_audience`; `api.introspection_url`,
/// `api.introspection_client_id`, `api.introspection_client_secret`,
/// `api.introspection_cache_ttl`, `api.introspection_timeout`; resend:
/// `api.resend_summary_threshold`, `api.resend_summary_event`, `api.resend_payload_profile`;
/// operators: `api.admin_token` (and `worker.partitions`, to find partition copies).
///
/// Throws `ConfigurationError` naming the key and where its value came from.
enum APISettings {
    static func configuration(settings: Settings) throws -> APIConfiguration {
        var configuration = APIConfiguration(authentication: try authentication(settings: settings))
        let (host, port) = try listenAddress(settings: settings)
        configuration.host = host
        configuration.port = port
        configuration.legacyBasePath = settings.string(.apiLegacyBasePath, default: "")
        configuration.maxBodyBytes = try settings.int(.apiMaxBodyBytes, default: 64 * 1024, range: 1024...(16 << 20))
        let rate = try settings.int(.apiRateLimitPerSecond, default: 10, range: 0...1_000_000)
        configuration.rateLimit =
            rate == 0
            ? nil
            : RateLimitConfiguration(
                requestsPerSecond: Double(rate), burst: try settings.int(.apiRateLimitBurst, default: 40, range: 1...1_000_000)
            )
        configuration.resend.summaryThreshold = try settings.int(.apiResendSummaryThreshold, default: 10, range: 1...configuration.resend.maxEntries)
        configuration.resend.summaryEventId = settings.string(.apiResendSummaryEvent, default: configuration.resend.summaryEventId)
        configuration.resend.payloadProfile = try settings.choice(.apiResendPayloadProfile, default: PayloadProfile.legacy)
        configuration.badgeSync = try settings.bool(.apiBadgeSync, default: false)
        if let token = settings.string(.apiAdminToken) {
            configuration.admin = AdminConfiguration(
                token: token, partitions: try RuntimeSettings.partitions(settings))
        }
        do {
            try configuration.validate()
        } catch {
            throw ConfigurationError(.invalidValue, key: "api", reason: error.description)
        }
        return configuration
    }

    /// `api.listen` (or another address key): `host:port` (`[v6]:port` for IPv6).
    static func listenAddress(settings: Settings, key: SettingKey = .apiListen, default fallback: String = "127.0.0.1:8080") throws -> (String, Int) {
        let raw = settings.string(key, default: fallback)
        guard let colon = raw.lastIndex(of: ":"), let port = Int(raw[raw.index(after: colon)...]), (0...65535).contains(port) else {
            throw ConfigurationError(.invalidValue, key: key.dotted, source: settings.lookup(key)?.source, reason: "'\(raw)' is not host:port")
        }
        var host = String(raw[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "0.0.0.0" : host, port)
    }

    static func authentication(settings: Settings) throws -> AuthenticationConfiguration {
        var authentication = AuthenticationConfiguration()
        let leeway = try settings.duration(.apiJWTLeeway, default: .seconds(30))
        if let secret = settings.string(.apiJWTSecret) {
            authentication.jwt = JWTConfiguration(key: .hs256(secret: Array(secret.utf8)), leeway: leeway)
        } else if let path = settings.string(.apiJWTPublicKeyPath) {
            let source = settings.lookup(.apiJWTPublicKeyPath)?.source
            let key: JWTConfiguration.Key
            do {
                key = try JWTVerifier.key(publicKeyPEM: try CredentialFile.readPEM(path, "the JWT public key"))
            } catch let error as SenderConfigurationError {
                throw ConfigurationError(.invalidFile, key: SettingKey.apiJWTPublicKeyPath.dotted, source: source, reason: error.description)
            } catch {
                throw ConfigurationError(.invalidFile, key: SettingKey.apiJWTPublicKeyPath.dotted, source: source, reason: "\(path): \(error)")
            }
            authentication.jwt = JWTConfiguration(key: key, leeway: leeway)
        }
        authentication.jwt?.issuer = settings.string(.apiJWTIssuer)
        authentication.jwt?.audience = settings.string(.apiJWTAudience)
        if let url = settings.string(.apiIntrospectionURL) {
            var introspection = IntrospectionConfiguration(
                url: url, clientId: settings.string(.apiIntrospectionClientID), clientSecret: settings.string(.apiIntrospectionClientSecret)
            )
            introspection.cacheTTL = try settings.duration(.apiIntrospectionCacheTTL, default: .seconds(30))
            introspection.timeout = try settings.duration(.apiIntrospectionTimeout, default: .seconds(5))
            authentication.introspection = introspection
        }
        return authentication
    }

    /// The bearer-token checker for `configuration` (HeraldHTTP carries introspection requests).
    static func makeAuthenticator(_ configuration: AuthenticationConfiguration, logger: Logger) async throws -> any Authenticator {
        let jwt: (any Authenticator)? =
            if let jwt = configuration.jwt {
                try await JWTVerifier(configuration: jwt)
            } else {
                nil
            }
        var opaque: (any Authenticator)?
        if let introspection = configuration.introspection {
            let transport = try HTTPIntrospectionTransport(logger: logger)
            opaque = TokenIntrospector(configuration: introspection, transport: transport, logger: logger)
        }
        return BearerAuthenticator(jwt: jwt, opaque: opaque)
    }

    /// The API application for `configuration` (from ``configuration(settings:)``, checked
    /// before anything starts) over `store`. `readinessChecks` are added to the database check
    /// of `/readyz` (`herald api` passes the broker's); `resendHandler` sends pushes for the
    /// resend route (`herald serve` passes the worker's sender); `metrics` renders `/metrics`
    /// (see ``PrometheusMetrics``).
    static func makeApplication(
        configuration: APIConfiguration, store: Store, readinessChecks: [String: APIDependencies.ReadinessCheck], resendHandler: (any ResendHandler)?,
        metrics: (@Sendable () -> [UInt8])?, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        let dependencies = APIDependencies(
            store: store, authenticator: try await makeAuthenticator(configuration.authentication, logger: logger),
            readinessChecks: readinessChecks, metrics: metrics, resendHandler: resendHandler, logger: logger
        )
        return try APIServer.makeApplication(configuration: configuration, dependencies: dependencies, onServerRunning: onServerRunning)
    }
}
