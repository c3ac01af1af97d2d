import Crypto
import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

@Suite struct APNsStandInTests {
    @Test func acceptsAValidPushAndRecordsIt() async throws {
        try await SandboxFixture.with(recordFile: true) { fixture in
            let response = try await fixture.apns()
            #expect(response.status == 200)
            #expect(response.version == .http2)
            #expect(response.headerFields["apns-id"] != nil)
            let push = try #require(fixture.sandbox.pushes.first)
            #expect(push.provider == .apns)
            #expect(push.token == SandboxFixture.deviceToken)
            #expect(push.app == SandboxFixture.topic)
            #expect(push.headers["apns-push-type"] == "alert")
            #expect(push.headers["apns-collapse-id"] == "collapse")
            #expect(push.body == SandboxFixture.alertBody)
            #expect(push.connectionID >= 1 && push.streamID >= 1)
            #expect(fixture.sandbox.counters(for: SandboxFixture.deviceToken).accepted == 1)
            // The record file has the same push as one JSON line (written in batches: flush first).
            fixture.sandbox.recorder.flush()
            let lines = try String(contentsOfFile: try #require(fixture.sandbox.recorder.file), encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 1)
            let line = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
            #expect(line["provider"] as? String == "apns")
            #expect(line["token"] as? String == SandboxFixture.deviceToken)
            #expect((line["body"] as? [String: Any])?["aps"] != nil)
            #expect(line["connection"] as? Int == push.connectionID)
            #expect(line["stream"] as? Int == push.streamID)
            #expect((line["headers"] as? [String: String])?["authorization"]?.hasSuffix("…") == true)
        }
    }

    /// Every check answers Apple's status and reason when broken on purpose.
    @Test func eachCheckRejectsWithApplesStatusAndReason() async throws {
        try await SandboxFixture.with(topics: [SandboxFixture.topic, "com.example.other"]) { fixture in
            let otherKey = P256.Signing.PrivateKey().pemRepresentation
            fixture.sandbox.setBehavior(.belongs(toTopic: "com.example.other"), for: String(repeating: "cd", count: 32))
            let big = Array(#"{"aps":{"alert":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 4100) + Array(#""}}"#.utf8)
            typealias Case = (name: String, status: Int, reason: String, send: () async throws -> HTTPClientResponse)
            let cases: [Case] = [
                ("GET", 405, "MethodNotAllowed", { try await fixture.apns(method: .get, body: []) }),
                ("other path", 404, "BadPath", { try await fixture.apns(path: "/3/other/\(SandboxFixture.deviceToken)") }),
                ("no device token", 400, "MissingDeviceToken", { try await fixture.apns(path: "/3/device/") }),
                ("no authorization", 403, "MissingProviderToken", { try await fixture.apns { $0.removeAll { $0.0 == "authorization" } } }),
                ("signed by another key", 403, "InvalidProviderToken", { try await fixture.apns(token: try await fixture.providerToken(keyPEM: otherKey)) }),
                ("wrong kid", 403, "InvalidProviderToken", { try await fixture.apns(token: try await fixture.providerToken(keyID: "ZZZZZZZZZZ")) }),
                ("wrong team id", 403, "InvalidProviderToken", { try await fixture.apns(token: try await fixture.providerToken(teamID: "WRONGTEAM0")) }),
                ("not a JWT", 403, "InvalidProviderToken", { try await fixture.apns(token: "not.a.jwt") }),
                (
                    "iat in the future", 403, "InvalidProviderToken",
                    { try await fixture.apns(token: try await fixture.providerToken(issuedAt: Date().addingTimeInterval(600))) }
                ),
                (
                    "older than an hour", 403, "ExpiredProviderToken",
                    { try await fixture.apns(token: try await fixture.providerToken(issuedAt: Date().addingTimeInterval(-3700))) }
                ),
                ("no topic", 400, "MissingTopic", { try await fixture.apns { $0.removeAll { $0.0 == "apns-topic" } } }),
                ("foreign topic", 400, "TopicDisallowed", { try await fixture.apns { Self.set(&$0, "apns-topic", "com.example.unknown") } }),
                ("token of another app", 400, "DeviceTokenNotForTopic", { try await fixture.apns(device: String(repeating: "cd", count: 32)) }),
                ("token not hex", 400, "BadDeviceToken", { try await fixture.apns(device: "not-a-device-token") }),
                ("token too short", 400, "BadDeviceToken", { try await fixture.apns(device: "abcd") }),
                ("no push type", 400, "InvalidPushType", { try await fixture.apns { $0.removeAll { $0.0 == "apns-push-type" } } }),
                ("unknown push type", 400, "InvalidPushType", { try await fixture.apns { Self.set(&$0, "apns-push-type", "shout") } }),
                (
                    "background without content-available", 400, "InvalidPushType",
                    {
                        try await fixture.apns {
                            Self.set(&$0, "apns-push-type", "background"); Self.set(&$0, "apns-priority", "5")
                        }
                    }
                ),
                ("alert without alert", 400, "InvalidPushType", { try await fixture.apns(body: Array(#"{"aps":{"content-available":1}}"#.utf8)) }),
                (
                    "background at priority 10", 400, "BadPriority",
                    {
                        try await fixture.apns(body: Array(#"{"aps":{"content-available":1}}"#.utf8)) { Self.set(&$0, "apns-push-type", "background") }
                    }
                ),
                ("priority 7", 400, "BadPriority", { try await fixture.apns { Self.set(&$0, "apns-priority", "7") } }),
                ("expiration not a number", 400, "BadExpirationDate", { try await fixture.apns { Self.set(&$0, "apns-expiration", "tomorrow") } }),
                (
                    "collapse id of 65 bytes", 400, "BadCollapseId",
                    { try await fixture.apns { Self.set(&$0, "apns-collapse-id", String(repeating: "c", count: 65)) } }
                ),
                ("apns-id not a UUID", 400, "BadMessageId", { try await fixture.apns { Self.set(&$0, "apns-id", "nope") } }),
                ("topic twice", 400, "DuplicateHeaders", { try await fixture.apns { $0.append(("apns-topic", SandboxFixture.topic)) } }),
                ("empty payload", 400, "PayloadEmpty", { try await fixture.apns(body: []) }),
                ("4097+ bytes", 413, "PayloadTooLarge", { try await fixture.apns(body: big) }),
                ("not JSON", 400, "BadPayload", { try await fixture.apns(body: Array("hello".utf8)) }),
                ("no aps", 400, "BadPayload", { try await fixture.apns(body: Array(#"{"alert":"hi"}"#.utf8)) }),
            ]
            for check in cases {
                let response = try await check.send()
                #expect(response.status.code == check.status, "\(check.name): status \(response.status) \(response.bodyText)")
                #expect(reason(response) == check.reason, "\(check.name): \(response.bodyText)")
            }
            // A payload of exactly 4096 bytes and a background push at priority 5 pass.
            let exact = Array(#"{"aps":{"alert":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 4096 - 20) + Array(#""}}"#.utf8)
            #expect(exact.count == 4096)
            #expect(try await fixture.apns(body: exact).status == 200)
            let background = try await fixture.apns(body: Array(#"{"aps":{"content-available":1}}"#.utf8)) {
                Self.set(&$0, "apns-push-type", "background")
                Self.set(&$0, "apns-priority", "5")
            }
            #expect(background.status == 200)
        }
    }

    @Test func aConnectionMayNotChangeProviderTokensMoreOftenThanEveryTwentyMinutes() async throws {
        try await SandboxFixture.with { fixture in
            let first = try await fixture.providerToken(issuedAt: Date().addingTimeInterval(-60))
            let second = try await fixture.providerToken(issuedAt: Date().addingTimeInterval(-30))
            #expect(try await fixture.apns(token: first).status == 200)
            let refused = try await fixture.apns(token: second)
            #expect(refused.status == 429)
            #expect(reason(refused) == "TooManyProviderTokenUpdates")
            // Once Apple has refused a token as expired, the next one is welcome.
            fixture.sandbox.apns.expireProviderTokens(issuedBefore: Date().addingTimeInterval(-45))
            let expired = try await fixture.apns(token: first)
            #expect(reason(expired) == "ExpiredProviderToken")
            #expect(try await fixture.apns(token: second).status == 200)
            #expect(fixture.sandbox.apns.providerTokensSeen == 2)
        }
    }

    @Test func scriptedTokensFailAsTold() async throws {
        try await SandboxFixture.with { fixture in
            let dead = String(repeating: "01", count: 32)
            let throttled = String(repeating: "02", count: 32)
            let flaky = String(repeating: "03", count: 32)
            let slow = String(repeating: "04", count: 32)
            fixture.sandbox.setBehavior(.unregistered, for: dead)
            fixture.sandbox.setBehavior(.throttled(retryAfter: 7), for: throttled)
            fixture.sandbox.setBehavior(.flaky(failures: 2), for: flaky)
            fixture.sandbox.setBehavior(.delay(milliseconds: 300), for: slow)

            let gone = try await fixture.apns(device: dead)
            #expect(gone.status == 410)
            #expect(reason(gone) == "Unregistered")
            #expect(jsonObject(gone)?["timestamp"] is NSNumber)

            let busy = try await fixture.apns(device: throttled)
            #expect(busy.status == 429)
            #expect(reason(busy) == "TooManyRequests")
            #expect(busy.headerFields["retry-after"] == "7")

            #expect(try await fixture.apns(device: flaky).status == 503)
            #expect(reason(try await fixture.apns(device: flaky)) == "ServiceUnavailable")
            #expect(try await fixture.apns(device: flaky).status == 200)
            #expect(
                fixture.sandbox.counters(for: flaky)
                    == {
                        var counters = TokenCounters()
                        counters.requests = 3
                        counters.accepted = 1
                        counters.rejections = ["ServiceUnavailable": 2]
                        return counters
                    }())

            let start = ContinuousClock.now
            #expect(try await fixture.apns(device: slow).status == 200)
            #expect(ContinuousClock.now - start >= .milliseconds(300))
        }
    }

    @Test func adminEndpointScriptsTokensAndReportsCounters() async throws {
        try await SandboxFixture.with { fixture in
            let token = String(repeating: "0f", count: 32)
            let put = try await fixture.client.execute(
                HTTPClientRequest(method: .put, url: fixture.sandbox.apnsURL + "/_sandbox/tokens/\(token)", body: Array(#"{"unregistered":true}"#.utf8))
            )
            #expect(put.status == 204)
            #expect(try await fixture.apns(device: token).status == 410)
            let stats = try await fixture.client.execute(HTTPClientRequest(url: fixture.sandbox.fcmURL + "/_sandbox/stats"))
            let object = try #require(jsonObject(stats))
            let tokens = try #require(object["tokens"] as? [String: Any])
            let counters = try #require(tokens[token] as? [String: Any])
            #expect(counters["requests"] as? Int == 1)
            #expect((counters["rejections"] as? [String: Int])?["Unregistered"] == 1)
            let delete = try await fixture.client.execute(HTTPClientRequest(method: .delete, url: fixture.sandbox.apnsURL + "/_sandbox/tokens/\(token)"))
            #expect(delete.status == 204)
            #expect(try await fixture.apns(device: token).status == 200)
            let bad = try await fixture.client.execute(
                HTTPClientRequest(method: .put, url: fixture.sandbox.apnsURL + "/_sandbox/tokens/\(token)", body: Array("nonsense".utf8))
            )
            #expect(bad.status == 400)
        }
    }

    static func set(_ headers: inout [(String, String)], _ name: String, _ value: String) {
        headers.removeAll { $0.0 == name }
        headers.append((name, value))
    }
}
