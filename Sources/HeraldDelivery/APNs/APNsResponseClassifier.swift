import Foundation
import HTTPTypes
import HeraldCore
import HeraldHTTP

/// Turns an APNs answer into a ``DeliveryOutcome`` — the one place that reads Apple's statuses
/// and reason strings.
///
/// - 200: sent.
/// - 410 (`Unregistered`, `ExpiredToken`), 400 `BadDeviceToken` / `DeviceTokenNotForTopic`:
///   the token is dead.
/// - 429 and 5xx: retry (after `Retry-After` when Apple sends one).
/// - 403 `ExpiredProviderToken`: retry (the sender has already made a new token and tried once).
/// - any other 4xx: permanent failure with Apple's reason.
/// - 5xx and transport failures count as the provider's fault (the worker's circuit breaker);
///   429 does not (one device or topic throttled).
/// - transport failures: retry, except a request HeraldHTTP refused to send (permanent).
enum APNsResponseClassifier {
    static func outcome(status: Int, body: [UInt8], headerFields: HTTPFields, now: Date = Date()) -> DeliveryOutcome {
        if status == 200 { return .sent }
        let reason = self.reason(in: body)
        let text = reason?.rawValue ?? "status \(status)"
        let retryAfter = RetryAfterHeader.parse(headerFields[.retryAfter], now: now)
        switch status {
        case 410:
            return .tokenDead(reason: text)
        case 400 where reason == .badDeviceToken || reason == .deviceTokenNotForTopic:
            return .tokenDead(reason: text)
        case 403 where reason == .expiredProviderToken:
            return .retryAfter(retryAfter, reason: text)
        case 429:
            return .retryAfter(retryAfter, reason: text)
        case 500...599:
            return .retryAfter(retryAfter, reason: text, providerFault: true)
        case 400...499:
            return .permanentFailure(reason: text)
        default:
            return .permanentFailure(reason: "unexpected status \(status)" + (reason.map { " (\($0))" } ?? ""))
        }
    }

    /// The `reason` of an APNs error body, if it has one.
    static func reason(in body: [UInt8]) -> APNsReason? {
        guard !body.isEmpty,
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let reason = object["reason"] as? String, !reason.isEmpty
        else { return nil }
        return APNsReason(String(reason.prefix(100)))
    }

    /// The outcome of a request that got no HTTP answer.
    static func outcome(for error: any Error) -> DeliveryOutcome {
        guard let error = error as? HTTPClientError else {
            if error is CancellationError { return .retryAfter(nil, reason: "cancelled") }
            return .retryAfter(nil, reason: "\(type(of: error))", providerFault: true)
        }
        switch error.code {
        case .invalidRequest:
            return .permanentFailure(reason: "request refused by the HTTP client: \(error.detail ?? "invalid request")")
        case .shutdown:
            // Herald is stopping: not the provider's doing.
            return .retryAfter(nil, reason: "transport: \(error.code)")
        default:
            return .retryAfter(nil, reason: "transport: \(error.code)", providerFault: true)
        }
    }
}
