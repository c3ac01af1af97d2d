import Foundation
import Hummingbird

/// Path and query values shared by the `/v1` routes.
extension Request {
    /// The `{deviceId}` path segment, percent-decoded and validated.
    func deviceId(_ context: APIRequestContext, validator: RequestValidator) throws(APIError) -> String {
        guard let raw = context.parameters.get("deviceId"), let decoded = raw.removingPercentEncoding else {
            throw APIError(.invalidDeviceId, "the device id in the path is not valid")
        }
        return try validator.deviceId(decoded)
    }

    /// The optional `app` query parameter (default app when absent).
    func app(validator: RequestValidator) throws(APIError) -> String? {
        try validator.app(uri.queryParameters.get("app"))
    }

    /// A whole-number query parameter in `range`, or `fallback` when absent.
    func intQuery(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws(APIError) -> Int {
        guard let raw = uri.queryParameters.get(name) else { return fallback }
        guard let value = Int(raw), range.contains(value) else {
            throw APIError(.invalidParameter, "query parameter '\(name)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// `/v1` bodies must be JSON (`application/json` or `…+json`).
    func requireJSONContentType() throws(APIError) {
        let type = headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard type == "application/json" || type.hasSuffix("+json") else {
            throw APIError(.unsupportedMediaType, "the request body must be application/json")
        }
    }
}
