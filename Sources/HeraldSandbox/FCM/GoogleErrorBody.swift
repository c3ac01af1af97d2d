import Foundation

/// Google's JSON error answers: the API error of FCM HTTP v1
/// (`{"error":{"code":…,"message":…,"status":…,"details":[…]}}`) and the OAuth2 token
/// endpoint's (`{"error":"invalid_grant","error_description":…}`).
enum GoogleErrorBody {
    /// An FCM HTTP v1 error, with an `FcmError` detail when `errorCode` is set and a
    /// `BadRequest` field violation when `field` is set.
    static func api(status: Int, canonical: String, message: String, errorCode: String? = nil, field: String? = nil, retryAfter: Int? = nil) -> ServerResponse {
        var details: [[String: Any]] = []
        if let errorCode {
            details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode])
        }
        if let field {
            details.append([
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [["field": field, "description": message]],
            ])
        }
        var error: [String: Any] = ["code": status, "message": message, "status": canonical]
        if !details.isEmpty { error["details"] = details }
        var headers: [(name: String, value: String)] = []
        if let retryAfter { headers.append(("retry-after", String(retryAfter))) }
        if status == 401 { headers.append(("www-authenticate", "Bearer realm=\"https://accounts.google.com/\", error=\"invalid_token\"")) }
        return .json(encode(["error": error]), status: status, headers: headers)
    }

    /// An OAuth2 token-endpoint error (RFC 6749 §5.2).
    static func oauth(status: Int = 400, error: String, description: String) -> ServerResponse {
        .json(encode(["error": error, "error_description": description]), status: status)
    }

    static func encode(_ object: [String: Any]) -> [UInt8] {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])).map { [UInt8]($0) } ?? []
    }
}
