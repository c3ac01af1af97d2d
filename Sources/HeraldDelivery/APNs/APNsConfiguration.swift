import Foundation
import HeraldHTTP

/// Everything an ``APNsSender`` needs: the apps (bundle ids) it sends to, how it authenticates,
/// which servers it talks to, and how its HTTP/2 client connects (proxy, CA, timeouts).
///
/// The first app is the default: a device without an `app` gets it. ``validate(now:)`` reads
/// every key and certificate file and throws a ``SenderConfigurationError`` that names the file
/// and the problem; ``APNsSender/init(configuration:clock:logger:)`` calls it.
public struct APNsConfiguration: Sendable {
    /// A token-authentication key: the `.p8` file, its key id and the team id.
    public struct TokenKey: Sendable, Hashable {
        public var file: String
        public var keyID: String
        public var teamID: String

        public init(file: String, keyID: String, teamID: String) {
            self.file = file
            self.keyID = keyID
            self.teamID = teamID
        }
    }

    /// The apps, default first. Each needs a certificate or the ``tokenKey``.
    public var apps: [APNsApp]
    /// The token-authentication key for the apps that have no certificate.
    public var tokenKey: TokenKey?
    public var environment: APNsEnvironment
    /// Replaces the environment's URL (`https://host:port`, no path): the local sandbox.
    public var baseURL: String?
    /// The HTTP/2 client's settings: CA file (for the sandbox), proxy, connections, timeouts.
    /// A certificate app's client certificate is added by the sender.
    public var http: HTTPClientConfiguration
    /// Most requests in flight at once over all apps; further sends wait (backpressure).
    public var maxInFlight: Int
    /// How long a provider token is reused (20–55 minutes).
    public var tokenRefreshInterval: Duration

    public init(
        apps: [APNsApp],
        tokenKey: TokenKey? = nil,
        environment: APNsEnvironment = .production,
        baseURL: String? = nil,
        http: HTTPClientConfiguration = HTTPClientConfiguration(),
        maxInFlight: Int = 500,
        tokenRefreshInterval: Duration = .seconds(50 * 60)
    ) {
        self.apps = apps
        self.tokenKey = tokenKey
        self.environment = environment
        self.baseURL = baseURL
        self.http = http
        self.maxInFlight = maxInFlight
        self.tokenRefreshInterval = tokenRefreshInterval
    }

    /// Token authentication for `topics` (default first) with one `.p8` key.
    public static func token(
        topics: [String], keyFile: String, keyID: String, teamID: String, environment: APNsEnvironment = .production, baseURL: String? = nil,
        http: HTTPClientConfiguration = HTTPClientConfiguration()
    ) -> APNsConfiguration {
        APNsConfiguration(
            apps: topics.map { APNsApp(topic: $0) }, tokenKey: TokenKey(file: keyFile, keyID: keyID, teamID: teamID),
            environment: environment, baseURL: baseURL, http: http
        )
    }

    /// The URL requests go to: ``baseURL`` or the environment's.
    public var effectiveBaseURL: String { ProviderConnection.trimmedBaseURL(baseURL ?? environment.baseURL) }

    /// Reads and checks every credential file and value.
    ///
    /// - Throws: ``SenderConfigurationError`` naming the file (or field) and the problem: no
    ///   apps, a malformed topic or URL, a missing/unreadable/wrong `.p8` key, a key id or team id
    ///   that is not 10 characters, an unreadable or expired certificate, a missing CA file.
    public func validate(now: Date = Date()) throws(SenderConfigurationError) {
        _ = try load(now: now)
    }

    /// What validation loaded: the signing key, if any app uses tokens, and when the earliest
    /// client certificate expires (`nil` with token authentication only).
    func load(now: Date) throws(SenderConfigurationError) -> (signingKey: APNsSigningKey?, certificateExpiry: Date?) {
        guard !apps.isEmpty else {
            throw SenderConfigurationError(.invalidValue, field: "apns.topic", problem: "no APNs app (bundle id) is configured")
        }
        var seen: Set<String> = []
        for app in apps {
            let topic = app.topic
            guard !topic.isEmpty, topic.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ",") }) else {
                throw SenderConfigurationError(.invalidValue, field: "apns.topic", problem: "'\(topic.prefix(80))' is not a bundle id")
            }
            guard seen.insert(topic).inserted else {
                throw SenderConfigurationError(.invalidValue, field: "apns.topic", problem: "\(topic) is listed twice")
            }
        }
        try ProviderConnection.check(baseURL: effectiveBaseURL, urlField: "apns.url", maxInFlight: maxInFlight, http: http, provider: "APNs")
        var signingKey: APNsSigningKey?
        if apps.contains(where: { $0.certificate == nil }) {
            guard let tokenKey else {
                let names = apps.filter { $0.certificate == nil }.map(\.topic).joined(separator: ", ")
                throw SenderConfigurationError(
                    .invalidValue, field: "apns.key_path",
                    problem: "no token key (apns.key_path, apns.key_id, apns.team_id) and no certificate for \(names)"
                )
            }
            signingKey = try APNsSigningKey.load(file: tokenKey.file, keyID: tokenKey.keyID, teamID: tokenKey.teamID)
        }
        var earliest: Date?
        for app in apps {
            guard let certificate = app.certificate else { continue }
            let notAfter: Date
            switch certificate.storage {
            case .pkcs12(let file, let password):
                notAfter = try CertificateValidity.checkPKCS12(file: file, password: password, now: now)
            case .pem(let certificateFile, let keyFile, let keyPassword):
                notAfter = try CertificateValidity.checkPEM(certificateFile: certificateFile, keyFile: keyFile, keyPassword: keyPassword, now: now)
            }
            earliest = min(earliest ?? notAfter, notAfter)
        }
        return (signingKey, earliest)
    }
}
