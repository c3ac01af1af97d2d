import Foundation
import HeraldHTTP

/// Everything an ``FCMSender`` needs: the Firebase projects (one service account each; the
/// first is the default), the FCM base URL, and the HTTP/2 client's settings (proxy, CA).
///
/// ``validate()`` reads every service-account file and throws a ``SenderConfigurationError``
/// that names the file and the problem; ``FCMSender/init(configuration:clock:logger:)`` calls it.
public struct FCMConfiguration: Sendable {
    public var projects: [FCMProject]
    /// Replaces `https://fcm.googleapis.com` (the local sandbox).
    public var baseURL: String?
    /// The HTTP/2 client's settings, also used for the OAuth2 token endpoint.
    public var http: HTTPClientConfiguration
    /// Most requests in flight at once; further sends wait (backpressure).
    public var maxInFlight: Int
    /// Fetch a new access token this long before the current one expires.
    public var tokenRefreshMargin: Duration

    public static let defaultBaseURL = "https://fcm.googleapis.com"

    public init(
        projects: [FCMProject], baseURL: String? = nil, http: HTTPClientConfiguration = HTTPClientConfiguration(), maxInFlight: Int = 500,
        tokenRefreshMargin: Duration = .seconds(300)
    ) {
        self.projects = projects
        self.baseURL = baseURL
        self.http = http
        self.maxInFlight = maxInFlight
        self.tokenRefreshMargin = tokenRefreshMargin
    }

    /// One project per service-account file, default first.
    public static func serviceAccounts(_ files: [String], baseURL: String? = nil, http: HTTPClientConfiguration = HTTPClientConfiguration()) -> FCMConfiguration
    {
        FCMConfiguration(projects: files.map { FCMProject(serviceAccountFile: $0) }, baseURL: baseURL, http: http)
    }

    public var effectiveBaseURL: String { ProviderConnection.trimmedBaseURL(baseURL ?? Self.defaultBaseURL) }

    /// Reads and checks every service-account file and value.
    ///
    /// - Throws: ``SenderConfigurationError``: no project, a missing/unreadable/truncated file,
    ///   a missing field (named), a key that is not RSA, two files for one project, a bad URL or
    ///   a missing CA file.
    public func validate() throws(SenderConfigurationError) {
        _ = try load()
    }

    /// The service accounts by alias, in configuration order.
    func load() throws(SenderConfigurationError) -> [(alias: String, account: FCMServiceAccount)] {
        guard !projects.isEmpty else {
            throw SenderConfigurationError(.invalidValue, field: "fcm.service_account_path", problem: "no service-account file is configured")
        }
        try ProviderConnection.check(baseURL: effectiveBaseURL, urlField: "fcm.url", maxInFlight: maxInFlight, http: http, provider: "FCM")
        var accounts: [(alias: String, account: FCMServiceAccount)] = []
        for project in projects {
            let account = try FCMServiceAccount.load(file: project.serviceAccountFile)
            let alias = project.alias ?? account.projectID
            if let other = accounts.first(where: { $0.alias == alias }) {
                throw SenderConfigurationError(
                    .invalidValue, file: project.serviceAccountFile,
                    problem: "project '\(alias)' is already configured by \(other.account.file); use one service account per project"
                )
            }
            accounts.append((alias, account))
        }
        return accounts
    }
}
