import Foundation
import HeraldHTTP

/// How a provider sender connects, checked the same way for APNs and FCM: both configurations
/// carry a base URL, an HTTP/2 client's settings and an in-flight bound, and a mistake in any
/// of them must stop the worker at start-up with the field or file named, not fail every
/// delivery later.
enum ProviderConnection {
    /// `url` without trailing slashes: request paths are appended to it.
    static func trimmedBaseURL(_ url: String) -> String {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Checks the base URL (`urlField` names its setting), the in-flight bound, the HTTP client's
    /// settings and its CA files; `provider` ("APNs", "FCM") prefixes the HTTP client's problems.
    static func check(
        baseURL: String, urlField: String, maxInFlight: Int, http: HTTPClientConfiguration, provider: String
    ) throws(SenderConfigurationError) {
        try checkURL(baseURL, field: urlField)
        guard maxInFlight >= 1 else {
            throw SenderConfigurationError(.invalidValue, field: "maxInFlight", problem: "must be at least 1")
        }
        do {
            try http.validate()
        } catch let error as HTTPClientError {
            throw SenderConfigurationError(
                .fileMissing, file: error.file, problem: "\(provider) HTTP client: \(error.detail ?? error.description)", underlying: error.description)
        } catch {
            throw SenderConfigurationError(.invalidValue, problem: "\(provider) HTTP client: \(error)")
        }
        try CertificateValidity.checkTrust(of: http)
    }

    private static func checkURL(_ url: String, field: String) throws(SenderConfigurationError) {
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://"),
            let parsed = URL(string: url), parsed.host != nil, parsed.path.isEmpty || parsed.path == "/", parsed.query == nil
        else {
            throw SenderConfigurationError(.invalidValue, field: field, problem: "'\(url.prefix(200))' is not a base URL such as https://host:port")
        }
    }
}
