import Foundation
import HeraldCore
import HeraldDelivery
import HeraldHTTP
import Logging

/// Builds the worker's ``PushSender`` from configuration: the one entry point the worker command
/// calls at start-up, before it consumes anything.
///
/// `worker.sender` chooses, and has no default for the commands that consume (a worker that
/// quietly logged every push as sent and acknowledged it would lose a production queue):
/// - `log`: ``LogSender`` — one JSON line per delivery to `worker.log_sender_file`, or to
///   standard output when unset; nothing reaches a device, and a warning says so at start;
/// - `null`: ``NullSender`` — accepts everything (benchmarks), with the same warning;
/// - `providers`: a ``RoutingSender`` over an ``APNsSender`` (when any `apns.*` credential key
///   is set) and an ``FCMSender`` (when `fcm.service_account_path` is set).
///
/// Keys read for `providers`:
/// - `apns.topic` (bundle ids, comma separated, default first; required for APNs);
///   token auth: `apns.key_path`, `apns.key_id`, `apns.team_id`; certificate auth:
///   `apns.cert_path` (one file for every topic, or one per topic in the same order; `.p12`/
///   `.pfx` are PKCS#12, anything else PEM), `apns.cert_key_path` (PEM key, default: the
///   certificate file), `apns.cert_password`; `apns.environment` (`production`|`sandbox`),
///   `apns.url`, `apns.ca_path`;
/// - `fcm.service_account_path` (one JSON key per Firebase project, comma separated, default
///   first; a device's `app` names the project id), `fcm.url`, `fcm.ca_path`;
/// - `proxy.url` (`http://host:port`; a bare `host:port` means `http://`), `proxy.user`,
///   `proxy.password`, used for both providers.
///
/// Every credential file is read and checked here (keys parse, ids are 10 characters,
/// certificates are not expired, service-account files have every field), so a wrong file stops
/// the worker at start-up.
///
/// - Throws: ``ConfigurationError`` naming the key, where its value came from, and — for a
///   credential file — the file and the problem (the ``SenderConfigurationError`` text); or
///   ``LogSenderError`` when the log file cannot be opened. The returned sender must be shut
///   down with `shutdown()` when the worker stops.
enum SenderSettings {
    /// The values of `worker.sender`.
    enum Kind: String, CaseIterable, Sendable {
        case log
        case null
        case providers
    }

    /// The sender `worker.sender` names. `unset` is what a command takes when no layer sets the
    /// key (`herald api`'s resend route: the log sender); nil, the consuming commands', makes
    /// the missing key a configuration error naming the key, its variable and its flag.
    static func makeSender(settings: Settings, logger: Logger, unset: Kind? = nil) throws -> any PushSender {
        switch try kind(settings, unset: unset) {
        case .log:
            let destination = settings.string(.workerLogSenderFile)
            let sender = try destination.map { try LogSender(path: $0) } ?? LogSender()
            logger.warning(
                "The log sender is on (worker.sender: log): pushes are written as JSON lines to \(destination ?? "standard output") and reach no device")
            return sender
        case .null:
            logger.warning("The null sender is on (worker.sender: null): pushes are discarded and reach no device")
            return NullSender()
        case .providers:
            let apns = try apnsConfiguration(settings: settings)
            let fcm = try fcmConfiguration(settings: settings)
            guard apns != nil || fcm != nil else {
                throw ConfigurationError(
                    .missing, key: SettingKey.workerSender.dotted,
                    reason:
                        "worker.sender is 'providers' but no provider is configured: set apns.topic with apns.key_path (or apns.cert_path), and/or fcm.service_account_path"
                )
            }
            var iosSender: APNsSender?
            if let apns {
                do {
                    iosSender = try APNsSender(configuration: apns, logger: logger)
                } catch {
                    throw configurationError(error, settings: settings, provider: "APNs")
                }
                logger.info(
                    "APNs sender ready", metadata: [LogKey.url: "\(apns.effectiveBaseURL)", LogKey.apps: "\(apns.apps.map(\.topic).joined(separator: ","))"])
            }
            var androidSender: FCMSender?
            if let fcm {
                do {
                    androidSender = try FCMSender(configuration: fcm, logger: logger)
                } catch {
                    // The APNs sender built above stops its connections when it is dropped.
                    throw configurationError(error, settings: settings, provider: "FCM")
                }
                logger.info("FCM sender ready", metadata: [LogKey.url: "\(fcm.effectiveBaseURL)"])
            }
            return RoutingSender(ios: iosSender, android: androidSender)
        }
    }

    /// `worker.sender`'s value, `unset` when no layer sets it.
    static func kind(_ settings: Settings, unset: Kind?) throws(ConfigurationError) -> Kind {
        guard settings.string(.workerSender) != nil else {
            guard let unset else { throw missingSender }
            return unset
        }
        return try settings.choice(.workerSender, default: Kind.providers)  // set: the default is never taken
    }

    /// The consuming commands' error for an unset `worker.sender`.
    static let missingSender = ConfigurationError(
        .missing, key: SettingKey.workerSender.dotted,
        reason:
            "not set: say where pushes go with --sender, \(SettingKey.workerSender.environmentName) or `worker.sender` in the configuration file: "
            + "providers (APNs and FCM), log (JSON lines, nothing is sent) or null (discarded, for benchmarks)"
    )

    /// The APNs configuration, or nil when no APNs key is set.
    static func apnsConfiguration(settings: Settings) throws -> APNsConfiguration? {
        let credentialKeys: [SettingKey] = [.apnsTopic, .apnsKeyPath, .apnsCertPath]
        guard credentialKeys.contains(where: { settings.string($0) != nil }) else { return nil }
        let topics = settings.list(.apnsTopic)
        guard !topics.isEmpty else {
            throw ConfigurationError(
                .missing, key: SettingKey.apnsTopic.dotted,
                reason: "APNs credentials are set but no bundle id: set apns.topic (comma separated, the default app first)")
        }
        let certificates = settings.list(.apnsCertPath)
        guard certificates.isEmpty || certificates.count == 1 || certificates.count == topics.count else {
            throw ConfigurationError(
                .invalidValue, key: SettingKey.apnsCertPath.dotted, source: settings.lookup(.apnsCertPath)?.source,
                reason: "give one certificate for every topic, or one per topic (\(topics.count)); found \(certificates.count)"
            )
        }
        let password = settings.string(.apnsCertPassword)
        var apps: [APNsApp] = []
        for (index, topic) in topics.enumerated() {
            var certificate: APNsCertificate?
            if !certificates.isEmpty {
                let file = certificates.count == 1 ? certificates[0] : certificates[index]
                let lower = file.lowercased()
                if lower.hasSuffix(".p12") || lower.hasSuffix(".pfx") {
                    certificate = .pkcs12(file: file, password: password)
                } else {
                    certificate = .pem(certificateFile: file, keyFile: settings.string(.apnsCertKeyPath) ?? file, keyPassword: password)
                }
            }
            apps.append(APNsApp(topic: topic, certificate: certificate))
        }
        var tokenKey: APNsConfiguration.TokenKey?
        if let keyPath = settings.string(.apnsKeyPath) {
            tokenKey = APNsConfiguration.TokenKey(file: keyPath, keyID: try settings.require(.apnsKeyID), teamID: try settings.require(.apnsTeamID))
        }
        return APNsConfiguration(
            apps: apps,
            tokenKey: tokenKey,
            environment: try settings.choice(.apnsEnvironment, default: APNsEnvironment.production),
            baseURL: settings.string(.apnsURL),
            http: try httpConfiguration(settings: settings, caPath: settings.string(.apnsCAPath))
        )
    }

    /// The FCM configuration, or nil when no service account is set.
    static func fcmConfiguration(settings: Settings) throws -> FCMConfiguration? {
        let files = settings.list(.fcmServiceAccountPath)
        guard !files.isEmpty else { return nil }
        return FCMConfiguration(
            projects: files.map { FCMProject(serviceAccountFile: $0) },
            baseURL: settings.string(.fcmURL),
            http: try httpConfiguration(settings: settings, caPath: settings.string(.fcmCAPath))
        )
    }

    /// HeraldHTTP settings shared by both providers: an extra CA (the sandbox) and the proxy.
    static func httpConfiguration(settings: Settings, caPath: String?) throws -> HTTPClientConfiguration {
        var http = HTTPClientConfiguration()
        http.tls.caFile = caPath
        if var url = settings.string(.proxyURL) {
            if !url.lowercased().hasPrefix("http://") && !url.lowercased().hasPrefix("https://") { url = "http://" + url }
            http.proxy = HTTPClientConfiguration.Proxy(url: url, user: settings.string(.proxyUser), password: settings.string(.proxyPassword))
        } else if settings.string(.proxyUser) != nil || settings.string(.proxyPassword) != nil {
            throw ConfigurationError(.missing, key: SettingKey.proxyURL.dotted, reason: "proxy.user or proxy.password is set but proxy.url is not")
        }
        return http
    }

    /// A ``SenderConfigurationError`` as a ``ConfigurationError`` naming the key that set the file.
    static func configurationError(_ error: SenderConfigurationError, settings: Settings, provider: String) -> ConfigurationError {
        let fileKeys: [SettingKey] = [.apnsKeyPath, .apnsCertPath, .apnsCertKeyPath, .apnsCAPath, .fcmServiceAccountPath, .fcmCAPath, .proxyURL]
        // A field that names its key (`team id (apns.team_id)`) wins over the file it was checked with.
        var key: SettingKey?
        if let field = error.field {
            key = SettingKey.all.first { field.contains($0.dotted) }
        }
        if key == nil, let file = error.file {
            key = fileKeys.first { settings.list($0).contains(file) || settings.string($0) == file }
        }
        return ConfigurationError(
            .invalidFile, key: key?.dotted, source: key.flatMap { settings.lookup($0)?.source },
            reason: "\(provider) cannot start: \(error.description)"
        )
    }
}
