import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Hummingbird
import Testing

/// Every request rule answers 4xx in the error format, and bad input never reaches the
/// database or leaks anything back.
@Suite("Validation")
struct ValidationTests {
    @Test func v1FieldRules() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u1")
            let apns = PushTokens.apns("t")
            func put(_ body: String, device: String = "d1", contentType: String = "application/json") async throws -> Reply {
                try await api.client.send(.put, "/v1/devices/\(device)", token: user, json: body, headers: [.contentType: contentType])
            }
            let cases: [(String, String)] = [
                (#"{"platform": "web", "token": "none", "culture": "ru-RU"}"#, "invalid_platform"),
                (#"{"platform": "ios", "token": "none", "culture": "ru_RU"}"#, "invalid_culture"),
                (#"{"platform": "ios", "token": "none", "culture": "rus-RU"}"#, "invalid_culture"),
                (#"{"platform": "ios", "token": "abc", "culture": "ru-RU"}"#, "invalid_push_token"),
                (#"{"platform": "ios", "token": "\#(apns)0", "culture": "ru-RU"}"#, "invalid_push_token"),
                (#"{"platform": "ios", "token": "\#(String(repeating: "g", count: 64))", "culture": "ru-RU"}"#, "invalid_push_token"),
                (#"{"platform": "android", "token": "short", "culture": "ru-RU"}"#, "invalid_push_token"),
                (#"{"platform": "android", "token": "\#(String(repeating: "a", count: 40))/x", "culture": "ru-RU"}"#, "invalid_push_token"),
                (
                    #"{"platform": "ios", "token": "none", "culture": "ru-RU", "tags": [\#((0..<33).map { "\"t\($0)\"" }.joined(separator: ","))]}"#,
                    "invalid_tags"
                ),
                (#"{"platform": "ios", "token": "none", "culture": "ru-RU", "tags": ["\#(String(repeating: "t", count: 65))"]}"#, "invalid_tags"),
                (#"{"platform": "ios", "token": "none", "culture": "ru-RU", "tags": ["a'; DROP TABLE devices; --"]}"#, "invalid_tags"),
                (#"{"platform": "ios", "token": "none", "culture": "ru-RU", "tags": [1]}"#, "invalid_json"),
                (#"{"platform": "ios", "token": "none", "culture": "ru-RU", "exclusive": "yes"}"#, "invalid_json"),
                (#"{"platform": "ios", "token": "none", "culture": "ru-RU", "userId": "admin"}"#, "unknown_field"),
                (#"{"platform": "ios", "culture": "ru-RU"}"#, "missing_field"),
                (#"{"platform": "ios", "token": null, "culture": "ru-RU"}"#, "missing_field"),
                (#"{"platform": "ios", "token": "none", "culture": "ru-RU", "app": "bad app"}"#, "invalid_parameter"),
            ]
            for (body, code) in cases {
                let reply = try await put(body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == code, "\(body)")
            }
            #expect(
                try await put(#"{"platform": "ios", "token": "none", "culture": "ru-RU"}"#, contentType: "text/plain").errorCode == "unsupported_media_type")
            #expect(
                try await put(#"{"platform": "ios", "token": "none", "culture": "ru-RU"}"#, device: String(repeating: "d", count: 129)).errorCode
                    == "invalid_device_id")
            #expect(try await put(#"{"platform": "ios", "token": "none", "culture": "ru-RU"}"#, device: "a%00b").errorCode == "invalid_device_id")
            #expect(try await api.store.devices.list().isEmpty)

            // Limits are inclusive: 32 tags of 64 characters, a 128-character id, a 200-digit token.
            let tags = (0..<32).map { "\"\(String(format: "%02d", $0))\(String(repeating: "t", count: 62))\"" }.joined(separator: ",")
            let longest = #"{"platform": "ios", "token": "\#(String(repeating: "ab", count: 100))", "culture": "EN-gb", "tags": [\#(tags)]}"#
            #expect(try await put(longest, device: String(repeating: "d", count: 128)).status == 201)
            #expect(try await api.store.devices.device(id: String(repeating: "d", count: 128))?.culture == "en-GB")
        }
    }

    /// Regression: `{"after": 9223372036854775807}` stopped the process (a Double of 2^63
    /// passed the range check and `Int(_:)` trapped). Numbers past the range, fractions and
    /// negatives are a 400; the process answers the next request.
    @Test func wholeNumbersAtTheEdgesOfTheRange() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u1")
            for after in ["9223372036854775807", "9223372036854775808", "1e19", "1.5", "-1", "-0.5", "1e400"] {
                let reply = try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: user, json: #"{"after": \#(after)}"#)
                #expect(reply.status == 400 && ["invalid_parameter", "invalid_json"].contains(reply.errorCode), "\(after): \(reply.text)")
            }
            // In range: past the body check, to the device lookup.
            let reply = try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: user, json: #"{"after": 9007199254740992}"#)
            #expect(reply.errorCode == "device_not_found")
        }
    }

    /// SQL meta-characters are data: stored and returned verbatim, the schema untouched.
    @Test func sqlMetaCharactersAreJustData() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u'1; DROP TABLE user_settings; --")
            let id = "x'); DELETE FROM devices; --"
            let path = "/v1/devices/" + (id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let body = #"{"platform": "ios", "token": "\#(PushTokens.apns("s"))", "culture": "ru-RU", "tags": ["a:b", "c.d_e-f"]}"#
            #expect(try await api.client.send(.put, path, token: user, json: body).status == 201)
            let read = try await api.client.send(.get, path, token: user)
            #expect(read.json["deviceId"] as? String == id)
            #expect(try await api.store.devices.device(id: id)?.users.map(\.userId) == ["u'1; DROP TABLE user_settings; --"])
            #expect(try await api.client.send(.put, "/v1/me/settings", token: user, json: #"{"pushesEnabled": false}"#).status == 200)
            #expect(try await api.store.settings.settings(forUser: "u'1; DROP TABLE user_settings; --").pushesEnabled == false)
        }
    }

    /// Bodies are read by HeraldCore's JSON reader, as events are: a key twice is refused (not
    /// "the last one wins"), and numbers are exact, never rounded through a `Double`.
    @Test func duplicateKeysAndBigNumbers() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u1")
            let register = #"{"platform": "ios", "token": "\#(PushTokens.apns("d1"))", "culture": "ru-RU"}"#
            #expect(try await api.client.send(.put, "/v1/devices/d1", token: user, json: register).status == 201)
            let duplicates: [(HTTPRequest.Method, String, String)] = [
                (.put, "/v1/devices/d2", #"{"platform": "ios", "platform": "android", "token": "none", "culture": "ru-RU"}"#),
                (.post, "/Subscribe.ashx", #"{"os": "ios", "os": "ios", "culture": "ru-ru", "id": "d3", "uri": "none"}"#),
                (.put, "/v1/me/settings", #"{"pushesEnabled": true, "pushesEnabled": false}"#),
            ]
            for (method, path, body) in duplicates {
                let reply = try await api.client.send(method, path, token: user, json: body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == "invalid_json", "\(body)")
                #expect(reply.text.contains("duplicate key"), "\(reply.text)")
            }
            #expect(try await api.store.devices.list().map(\.deviceId) == ["d1"])
            #expect(try await api.store.settings.settings(forUser: "u1").pushesEnabled == true)

            func resend(after: String) async throws -> Reply {
                try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: user, json: #"{"after": \#(after)}"#)
            }
            // Whole numbers up to 2^53 (what a JSON number holds exactly), however written;
            // nothing above, no fractions.
            for after in ["9007199254740992", "1e2", "100.0", "0"] {
                let reply = try await resend(after: after)
                #expect(reply.status == 200, "\(after): \(reply.text)")
                #expect(reply.json["missed"] as? Int == 0, "\(after)")
            }
            for after in ["9007199254740993", "9223372036854775807", "9223372036854775808", "123456789012345678901234567890", "1e400", "-1", "0.5", "1e-400"] {
                let reply = try await resend(after: after)
                #expect(reply.status == 400, "\(after)")
                #expect(reply.errorCode == "invalid_parameter", "\(after): \(reply.text)")
            }
        }
    }

    @Test func oversizedBodiesAre413() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u1")
            let megabyte = #"{"platform": "ios", "token": "none", "culture": "ru-RU", "tags": ["\#(String(repeating: "a", count: 1 << 20))"]}"#
            for (method, path) in [(HTTPRequest.Method.put, "/v1/devices/big"), (.post, "/Subscribe.ashx")] {
                let reply = try await api.client.send(method, path, token: user, json: megabyte)
                #expect(reply.status == 413)
                #expect(reply.errorCode == "body_too_large")
            }
            #expect(try await api.store.devices.list().isEmpty)
        }
    }

    @Test func unknownRoutesAndMethodsUseTheErrorFormat() async throws {
        try await APIFixture.with { api in
            #expect(try await api.client.send(.get, "/nothing/here").errorCode == "not_found")
            // A route with another method: 405 and the methods it takes (found by schemathesis,
            // which sends methods the document does not list; the router answered 404).
            let wrongMethod = try await api.client.send(.patch, "/v1/devices/d1", token: try await TestTokens.token("u1"))
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.errorCode == "method_not_allowed")
            #expect(wrongMethod.headers[.allow] == "DELETE, GET, PUT")
            let trace = try await api.client.send(.init("TRACE")!, "/healthz")
            #expect(trace.status == 405 && trace.headers[.allow] == "GET")
            #expect(try await api.client.send(.get, "/Subscribe.ashx").headers[.allow] == "POST")
            #expect(try await api.client.send(.delete, "/v1/devices/d1/notifications").headers[.allow] == "GET")
            #expect(try await api.client.send(.get, "/v1/devices/d1/extra").errorCode == "not_found")
        }
    }

    /// 2,000 mixed invalid requests: every one refused with 4xx in the error format, nothing
    /// written, and the server still answers normally afterwards.
    @Test(.timeLimit(.minutes(3))) func twoThousandInvalidRequestsChangeNothing() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u1")
            let before = try await Self.rowCounts(api)
            let bad = try await InvalidRequests.make(count: 2000, validToken: user)
            for request in bad {
                let reply = try await api.client.send(request.method, request.path, json: request.body, headers: request.headers)
                #expect((400..<500).contains(reply.status), "\(request.path)")
                #expect(!reply.errorCode.isEmpty)
                #expect(!reply.text.contains("SELECT") && !reply.text.contains("Thread") && !reply.text.contains(user))
            }
            #expect(try await Self.rowCounts(api) == before)
            #expect(try await api.client.send(.get, "/healthz").status == 200)
            #expect(
                try await api.client.send(.put, "/v1/devices/ok", token: user, json: #"{"platform": "ios", "token": "none", "culture": "ru-RU"}"#).status == 201
            )
        }
    }

    static func rowCounts(_ api: APIFixture) async throws -> [Int] {
        var counts: [Int] = []
        for table in ["devices", "device_users", "user_settings", "journal"] {
            counts.append(try await api.database.admin.query("SELECT count(*) FROM \(table)").first?.decode(Int.self, at: 0) ?? -1)
        }
        return counts
    }
}
