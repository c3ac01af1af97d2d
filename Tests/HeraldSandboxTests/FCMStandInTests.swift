import CryptoExtras
import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

@Suite struct FCMStandInTests {
    static let grant = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="

    @Test func tokenEndpointIssuesAccessTokensForAValidAssertion() async throws {
        try await SandboxFixture.with { fixture in
            let response = try await fixture.tokenRequest(form: Self.grant + (try await fixture.assertion()))
            #expect(response.status == 200)
            let object = try #require(jsonObject(response))
            #expect((object["access_token"] as? String)?.isEmpty == false)
            #expect(object["expires_in"] as? Int == 3599)
            #expect(object["token_type"] as? String == "Bearer")
            #expect(fixture.sandbox.fcm.oauth.accessTokensIssued == 1)
        }
    }

    @Test func tokenEndpointChecksWhatGoogleChecks() async throws {
        try await SandboxFixture.with { fixture in
            let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048).pkcs8PEMRepresentation
            typealias Case = (name: String, form: () async throws -> String, status: Int, error: String)
            let cases: [Case] = [
                ("wrong grant type", { "grant_type=client_credentials&assertion=\(try await fixture.assertion())" }, 400, "unsupported_grant_type"),
                ("no assertion", { "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer" }, 400, "invalid_request"),
                ("not a JWT", { Self.grant + "abc" }, 400, "invalid_grant"),
                ("signed by another key", { Self.grant + (try await fixture.assertion(keyPEM: otherKey)) }, 400, "invalid_grant"),
                ("unknown key id", { Self.grant + (try await fixture.assertion(keyID: "0000")) }, 400, "invalid_grant"),
                ("another issuer", { Self.grant + (try await fixture.assertion(issuer: "someone@example.com")) }, 400, "invalid_grant"),
                ("wrong audience", { Self.grant + (try await fixture.assertion(audience: "https://oauth2.googleapis.com/token")) }, 400, "invalid_grant"),
                ("longer than an hour", { Self.grant + (try await fixture.assertion(lifetime: 7200)) }, 400, "invalid_grant"),
                ("expired", { Self.grant + (try await fixture.assertion(issuedAt: Date().addingTimeInterval(-7200))) }, 400, "invalid_grant"),
                ("wrong scope", { Self.grant + (try await fixture.assertion(scope: "https://www.googleapis.com/auth/userinfo.email")) }, 400, "invalid_scope"),
            ]
            for check in cases {
                let response = try await fixture.tokenRequest(form: try await check.form())
                #expect(response.status.code == check.status, "\(check.name): \(response.bodyText)")
                #expect(jsonObject(response)?["error"] as? String == check.error, "\(check.name): \(response.bodyText)")
            }
            #expect(fixture.sandbox.fcm.oauth.accessTokensIssued == 0)
        }
    }

    @Test func acceptsAValidMessageAndRecordsIt() async throws {
        try await SandboxFixture.with { fixture in
            let accessToken = try await fixture.accessToken()
            let response = try await fixture.fcm(json: SandboxFixture.message(), accessToken: accessToken)
            #expect(response.status == 200, "\(response.bodyText)")
            #expect((jsonObject(response)?["name"] as? String)?.hasPrefix("projects/herald-sandbox/messages/") == true)
            let push = try #require(fixture.sandbox.pushes.first)
            #expect(push.provider == .fcm)
            #expect(push.token == "fcm-token:abc_DEF-123")
            #expect(push.app == "herald-sandbox")
            #expect(push.body == Array(SandboxFixture.message().utf8))
        }
    }

    /// Every check answers Google's status and error when broken on purpose.
    @Test func eachMessageCheckRejectsWithGooglesError() async throws {
        try await SandboxFixture.with { fixture in
            let token = try await fixture.accessToken()
            let big = String(repeating: "x", count: 4100)
            typealias Case = (name: String, send: () async throws -> HTTPClientResponse, status: Int, canonical: String, errorCode: String?, field: String?)
            let cases: [Case] = [
                ("no bearer token", { try await fixture.fcm(json: SandboxFixture.message(), accessToken: nil) }, 401, "UNAUTHENTICATED", nil, nil),
                (
                    "unknown bearer token", { try await fixture.fcm(json: SandboxFixture.message(), accessToken: "ya29.forged") }, 401, "UNAUTHENTICATED", nil,
                    nil
                ),
                (
                    "another project", { try await fixture.fcm(json: SandboxFixture.message(), accessToken: token, project: "other") }, 403,
                    "PERMISSION_DENIED", nil, nil
                ),
                ("not JSON", { try await fixture.fcm(json: "hello", accessToken: token) }, 400, "INVALID_ARGUMENT", nil, nil),
                ("no message", { try await fixture.fcm(json: #"{"token":"x"}"#, accessToken: token) }, 400, "INVALID_ARGUMENT", nil, nil),
                (
                    "unknown message field", { try await fixture.fcm(json: SandboxFixture.message(extra: #","priority":"high""#), accessToken: token) }, 400,
                    "INVALID_ARGUMENT", nil, nil
                ),
                (
                    "two targets", { try await fixture.fcm(json: SandboxFixture.message(extra: #","topic":"news""#), accessToken: token) }, 400,
                    "INVALID_ARGUMENT", nil, "message"
                ),
                ("no target", { try await fixture.fcm(json: #"{"message":{"data":{"a":"b"}}}"#, accessToken: token) }, 400, "INVALID_ARGUMENT", nil, "message"),
                (
                    "malformed token", { try await fixture.fcm(json: SandboxFixture.message(token: "not a token!"), accessToken: token) }, 400,
                    "INVALID_ARGUMENT", "INVALID_ARGUMENT", nil
                ),
                (
                    "data value not a string",
                    {
                        try await fixture.fcm(json: #"{"message":{"token":"t1","data":{"a":"b","n":12}}}"#, accessToken: token)
                    }, 400, "INVALID_ARGUMENT", nil, "message.data[1].value"
                ),
                (
                    "reserved data key", { try await fixture.fcm(json: #"{"message":{"token":"t1","data":{"from":"me"}}}"#, accessToken: token) }, 400,
                    "INVALID_ARGUMENT", "INVALID_ARGUMENT", nil
                ),
                (
                    "bad priority", { try await fixture.fcm(json: #"{"message":{"token":"t1","android":{"priority":"URGENT"}}}"#, accessToken: token) }, 400,
                    "INVALID_ARGUMENT", nil, "message.android.priority"
                ),
                (
                    "bad ttl", { try await fixture.fcm(json: #"{"message":{"token":"t1","android":{"ttl":"1h"}}}"#, accessToken: token) }, 400,
                    "INVALID_ARGUMENT", nil, "message.android.ttl"
                ),
                (
                    "unknown android field",
                    { try await fixture.fcm(json: #"{"message":{"token":"t1","android":{"channel_id":"money_in"}}}"#, accessToken: token) }, 400,
                    "INVALID_ARGUMENT", nil, nil
                ),
                (
                    "misspelt notification field",
                    { try await fixture.fcm(json: #"{"message":{"token":"t1","android":{"notification":{"channel":"money_in"}}}}"#, accessToken: token) },
                    400, "INVALID_ARGUMENT", nil, nil
                ),
                (
                    "channel id not a string",
                    { try await fixture.fcm(json: #"{"message":{"token":"t1","android":{"notification":{"channelId":7}}}}"#, accessToken: token) }, 400,
                    "INVALID_ARGUMENT", nil, "message.android.notification.channel_id"
                ),
                (
                    "over 4096 bytes", { try await fixture.fcm(json: #"{"message":{"token":"t1","data":{"msg":"\#(big)"}}}"#, accessToken: token) }, 400,
                    "INVALID_ARGUMENT", "INVALID_ARGUMENT", nil
                ),
            ]
            for check in cases {
                let response = try await check.send()
                let error = googleError(response)
                #expect(response.status.code == check.status, "\(check.name): \(response.bodyText)")
                #expect(error.status == check.canonical, "\(check.name): \(response.bodyText)")
                #expect(error.errorCode == check.errorCode, "\(check.name): \(response.bodyText)")
                #expect(error.field == check.field, "\(check.name): \(response.bodyText)")
            }
            let wrongPath = try await fixture.client.execute(
                HTTPClientRequest(
                    method: .post, url: fixture.sandbox.fcmURL + "/v1/messages:send", headerFields: [.authorization: "Bearer \(token)"], body: Array("{}".utf8))
            )
            #expect(wrongPath.status == 404)
            #expect(googleError(wrongPath).status == "NOT_FOUND")
            // Revoked access tokens are refused.
            fixture.sandbox.fcm.oauth.revokeAccessTokens()
            #expect(try await fixture.fcm(json: SandboxFixture.message(), accessToken: token).status == 401)
            #expect(fixture.sandbox.pushes.isEmpty)
        }
    }

    @Test func scriptedTokensFailAsTold() async throws {
        try await SandboxFixture.with { fixture in
            let accessToken = try await fixture.accessToken()
            fixture.sandbox.setBehavior(.unregistered, for: "dead")
            fixture.sandbox.setBehavior(.throttled(retryAfter: 9), for: "busy")
            fixture.sandbox.setBehavior(.flaky(failures: 1), for: "flaky")

            let gone = try await fixture.fcm(json: SandboxFixture.message(token: "dead"), accessToken: accessToken)
            #expect(gone.status == 404)
            #expect(googleError(gone).errorCode == "UNREGISTERED")

            let busy = try await fixture.fcm(json: SandboxFixture.message(token: "busy"), accessToken: accessToken)
            #expect(busy.status == 429)
            #expect(googleError(busy).errorCode == "QUOTA_EXCEEDED")
            #expect(busy.headerFields["retry-after"] == "9")

            let first = try await fixture.fcm(json: SandboxFixture.message(token: "flaky"), accessToken: accessToken)
            #expect(first.status == 503)
            #expect(googleError(first).errorCode == "UNAVAILABLE")
            #expect(try await fixture.fcm(json: SandboxFixture.message(token: "flaky"), accessToken: accessToken).status == 200)
            #expect(fixture.sandbox.counters(for: "flaky").accepted == 1)
            #expect(fixture.sandbox.counters(for: "dead").rejections == ["UNREGISTERED": 1])
        }
    }
}
