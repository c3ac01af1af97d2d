import Foundation
import HTTPTypes

/// A deterministic mix of invalid requests (bad tokens, bad bodies, bad fields, wrong
/// methods, oversized and hostile values) for the "2,000 invalid requests" checks.
struct InvalidRequests {
    struct Request: Sendable {
        var method: HTTPRequest.Method
        var path: String
        var headers: HTTPFields
        var body: String?
    }

    static func make(count: Int, validToken: String) async throws -> [Request] {
        let expired = try await TestTokens.token("u1", expiresIn: -3600)
        let forged = try await TestTokens.token("u1", secret: Array("forged-secret-forged-secret-forged-secret".utf8))
        let none = try TestTokens.unsignedToken("u1")
        let auth: (String) -> HTTPFields = { [.authorization: "Bearer \($0)", .contentType: "application/json"] }
        let good: HTTPFields = auth(validToken)
        let hostile = ["'; DROP TABLE devices; --", "\u{0}", "../../etc/passwd", "<script>", String(repeating: "z", count: 5000)]
        var templates: [Request] = [
            Request(method: .post, path: "/Subscribe.ashx", headers: [:], body: #"{"os":"ios","culture":"ru-ru","id":"1","uri":"none","tags":[]}"#),
            Request(method: .post, path: "/Subscribe.ashx", headers: auth(expired), body: #"{"os":"ios","culture":"ru-ru","id":"1","uri":"none","tags":[]}"#),
            Request(method: .put, path: "/v1/devices/d", headers: auth(forged), body: #"{"platform":"ios","token":"none","culture":"ru-RU"}"#),
            Request(method: .put, path: "/v1/devices/d", headers: auth(none), body: #"{"platform":"ios","token":"none","culture":"ru-RU"}"#),
            Request(method: .put, path: "/v1/devices/d", headers: [.authorization: "Bearer ' OR 1=1 --"], body: "{}"),
            Request(method: .post, path: "/Subscribe.ashx", headers: good, body: "{"),
            Request(method: .post, path: "/Subscribe.ashx", headers: good, body: "null"),
            Request(method: .post, path: "/Unsubscribe.ashx", headers: good, body: #"{"id": ""}"#),
            Request(method: .put, path: "/v1/devices/d", headers: good, body: #"{"platform":"ios","token":"none","culture":"ru-RU","extra":1}"#),
            Request(method: .put, path: "/v1/devices/d", headers: good, body: #"{"platform":"ios","token":"none","culture":"xx"}"#),
            Request(method: .put, path: "/v1/me/settings", headers: good, body: #"{"pushesEnabled":"no"}"#),
            Request(method: .get, path: "/v1/devices/d/notifications?after=abc", headers: good, body: nil),
            Request(method: .post, path: "/v1/devices/d/notifications/resend", headers: good, body: #"{"after": -5}"#),
            Request(method: .get, path: "/v1/devices/unknown", headers: good, body: nil),
            Request(method: .delete, path: "/v1/devices/unknown", headers: good, body: nil),
            Request(method: .get, path: "/v2/anything", headers: good, body: nil),
        ]
        for value in hostile {
            let escaped = value.replacingOccurrences(of: "\u{0}", with: "\\u0000")
            templates.append(
                Request(method: .post, path: "/Subscribe.ashx", headers: good, body: #"{"os":"\#(escaped)","culture":"ru-ru","id":"1","uri":"none"}"#))
            templates.append(Request(method: .put, path: "/v1/devices/d", headers: good, body: #"{"platform":"ios","token":"\#(escaped)","culture":"ru-RU"}"#))
            templates.append(
                Request(
                    method: .put, path: "/v1/devices/d", headers: good, body: #"{"platform":"ios","token":"none","culture":"ru-RU","tags":["\#(escaped)"]}"#))
        }
        return (0..<count).map { templates[$0 % templates.count] }
    }
}
