import Metrics

extension APIError {
    /// A refused bearer token (401), counted in `herald_api_auth_failures_total{reason}`.
    static func authentication(_ code: Code, _ message: String, reason: String) -> APIError {
        Counter(label: "herald_api_auth_failures_total", dimensions: [("reason", reason)]).increment()
        return APIError(code, message)
    }
}
