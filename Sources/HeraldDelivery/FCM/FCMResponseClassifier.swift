import Foundation
import HTTPTypes
import HeraldCore
import HeraldHTTP

/// Turns an FCM HTTP v1 answer into a ``DeliveryOutcome`` — the one place that reads Google's
/// error bodies (`{"error":{"code":…,"status":…,"details":[{"errorCode":…}]}}`).
///
/// - 200: sent.
/// - `UNREGISTERED`, `NOT_FOUND`, `SENDER_ID_MISMATCH`: the token is dead.
/// - `QUOTA_EXCEEDED`, `UNAVAILABLE`, `INTERNAL`, any 429 or 5xx: retry, honouring
///   `Retry-After`.
/// - `UNAVAILABLE`, `INTERNAL` and other 5xx count as the provider's fault (circuit breaker);
///   a throttled request does not.
/// - `UNAUTHENTICATED` (401): retry (the sender has already fetched a new access token and tried
///   once).
/// - `INVALID_ARGUMENT`, `THIRD_PARTY_AUTH_ERROR` and any other 4xx: permanent failure.
enum FCMResponseClassifier {
    static func outcome(status: Int, body: [UInt8], headerFields: HTTPFields, now: Date = Date()) -> DeliveryOutcome {
        if status == 200 { return .sent }
        let code = errorCode(in: body)
        let text = code?.rawValue ?? "status \(status)"
        let retryAfter = RetryAfterHeader.parse(headerFields[.retryAfter], now: now)
        if let code {
            switch code {
            case .unregistered, .notFound, .senderIDMismatch:
                return .tokenDead(reason: text)
            case .unavailable, .internal:
                return .retryAfter(retryAfter, reason: text, providerFault: true)
            case .quotaExceeded, .resourceExhausted, .unauthenticated:
                return .retryAfter(retryAfter, reason: text)
            case .invalidArgument, .thirdPartyAuthError:
                return .permanentFailure(reason: text)
            default:
                break
            }
        }
        switch status {
        case 404: return .tokenDead(reason: text)
        case 401, 429: return .retryAfter(retryAfter, reason: text)
        case 500...599: return .retryAfter(retryAfter, reason: text, providerFault: true)
        case 400...499: return .permanentFailure(reason: text)
        default: return .permanentFailure(reason: "unexpected status \(status)" + (code.map { " (\($0))" } ?? ""))
        }
    }

    /// The FcmError `errorCode` of an error body, else its `status`.
    static func errorCode(in body: [UInt8]) -> FCMErrorCode? {
        guard !body.isEmpty,
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let error = object["error"] as? [String: Any]
        else { return nil }
        if let details = error["details"] as? [[String: Any]] {
            for detail in details {
                if let code = detail["errorCode"] as? String, !code.isEmpty { return FCMErrorCode(String(code.prefix(64))) }
            }
        }
        if let status = error["status"] as? String, !status.isEmpty { return FCMErrorCode(String(status.prefix(64))) }
        return nil
    }

    /// The outcome of a request that got no HTTP answer: the same rules as APNs.
    static func outcome(for error: any Error) -> DeliveryOutcome {
        APNsResponseClassifier.outcome(for: error)
    }
}
