import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Hummingbird
import Testing

/// Seed 000's `Subscribe.ashx` / `Unsubscribe.ashx`, in process over a real database.
@Suite("Legacy Subscribe.ashx / Unsubscribe.ashx")
struct LegacyEndpointTests {
    static func body(os: String = "ios", culture: String = "ru-ru", id: String = "1234567890", uri: String, tags: [String]) -> String {
        let list = tags.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"os": "\#(os)", "culture": "\#(culture)", "id": "\#(id)", "uri": "\#(uri)", "tags": [\#(list)]}"#
    }

    @Test func subscribeAsSeedDocumentsThenTagsReplaceAndUnsubscribe() async throws {
        try await APIFixture.with { api in
            let token = try await TestTokens.token("119973638970", zone: "w1", branch: "101")
            let uri = PushTokens.apns("device-1")
            let subscribed = try await api.client.send(.post, "/Subscribe.ashx", token: token, json: Self.body(uri: uri, tags: ["account", "t1", "t2"]))
            #expect(subscribed.status == 200)
            #expect(subscribed.body.isEmpty)

            var device = try #require(try await api.store.devices.device(id: "1234567890"))
            #expect(device.platform == .ios)
            #expect(device.token == uri)
            #expect(device.culture == "ru-RU")
            #expect(device.users.map(\.userId) == ["119973638970"])
            #expect(device.users.first?.tags == ["account", "t1", "t2"])
            #expect(device.users.first?.zoneId == "w1")
            #expect(device.users.first?.branchId == "101")

            // Subscribe again: the tag set is replaced, not merged.
            #expect(try await api.client.send(.post, "/Subscribe.ashx", token: token, json: Self.body(uri: uri, tags: ["t3"])).status == 200)
            device = try #require(try await api.store.devices.device(id: "1234567890"))
            #expect(device.users.first?.tags == ["t3"])

            // Unsubscribe from some tags, then from all (empty array).
            #expect(try await api.client.send(.post, "/Subscribe.ashx", token: token, json: Self.body(uri: uri, tags: ["a", "b"])).status == 200)
            #expect(try await api.client.send(.post, "/Unsubscribe.ashx", token: token, json: Self.body(uri: uri, tags: ["a"])).status == 200)
            #expect(try await api.store.devices.device(id: "1234567890")?.users.first?.tags == ["b"])
            #expect(try await api.client.send(.post, "/Unsubscribe.ashx", token: token, json: Self.body(uri: uri, tags: [])).status == 200)
            #expect(try await api.store.devices.device(id: "1234567890")?.users.isEmpty == true)
            #expect(try await api.store.devices.subscriptions(forUsers: ["119973638970"]).isEmpty)
        }
    }

    @Test func fieldNamesInAnyCaseAndABasePath() async throws {
        try await APIFixture.with(configure: { $0.legacyBasePath = "/PushNotification" }) { api in
            let token = try await TestTokens.token("u1")
            let body = #"{"OS": "Android", "Culture": "EN-us", "Id": "dev-2", "Uri": "\#(PushTokens.fcm("dev-2"))", "Tags": ["News"]}"#
            #expect(try await api.client.send(.post, "/PushNotification/Subscribe.ashx", token: token, json: body).status == 200)
            let device = try #require(try await api.store.devices.device(id: "dev-2"))
            #expect(device.platform == .android)
            #expect(device.culture == "en-US")
            #expect(device.users.first?.tags == ["news"])
            #expect(try await api.client.send(.post, "/Subscribe.ashx", token: token, json: body).errorCode == "not_found")
        }
    }

    @Test func noneTokenKeepsTheDeviceWithoutPushes() async throws {
        try await APIFixture.with { api in
            let token = try await TestTokens.token("u1")
            #expect(try await api.client.send(.post, "/Subscribe.ashx", token: token, json: Self.body(uri: PushTokens.apns("x"), tags: [])).status == 200)
            #expect(try await api.store.devices.subscriptions(forUsers: ["u1"]).count == 1)
            #expect(try await api.client.send(.post, "/Subscribe.ashx", token: token, json: Self.body(uri: "none", tags: [])).status == 200)
            let device = try #require(try await api.store.devices.device(id: "1234567890"))
            #expect(device.token == nil)
            #expect(device.users.map(\.userId) == ["u1"])
            #expect(try await api.store.devices.subscriptions(forUsers: ["u1"]).isEmpty)
        }
    }

    /// Seed 000's two wallets: a second user on the same installation (same token) gets pushes
    /// next to the first; a user with another token takes the device over alone.
    @Test func twoUsersOnOneDeviceAndAUserSwitch() async throws {
        try await APIFixture.with { api in
            let uri = PushTokens.apns("phone")
            let wallet1 = try await TestTokens.token("wallet1")
            let wallet2 = try await TestTokens.token("wallet2")
            #expect(try await api.client.send(.post, "/Subscribe.ashx", token: wallet1, json: Self.body(uri: uri, tags: [])).status == 200)
            #expect(try await api.client.send(.post, "/Subscribe.ashx", token: wallet2, json: Self.body(uri: uri, tags: [])).status == 200)
            let both = try await api.store.devices.subscriptions(forUsers: ["wallet1", "wallet2"])
            #expect(Set(both.map(\.userId)) == ["wallet1", "wallet2"])
            #expect(Set(both.map(\.token)) == [uri])

            // A third user arrives with a different token: the device moves to them alone, so
            // the wallets' pushes never reach a token they did not register.
            let other = PushTokens.apns("another phone")
            let wallet3 = try await TestTokens.token("wallet3")
            #expect(try await api.client.send(.post, "/Subscribe.ashx", token: wallet3, json: Self.body(uri: other, tags: [])).status == 200)
            let device = try #require(try await api.store.devices.device(id: "1234567890"))
            #expect(device.users.map(\.userId) == ["wallet3"])
            #expect(device.token == other)
            #expect(try await api.store.devices.subscriptions(forUsers: ["wallet1", "wallet2"]).isEmpty)
        }
    }

    /// Unsubscribe checks `os`, `uri` and `culture` whenever they are present, each on its own:
    /// a `uri` without `os` must be a token of some platform (or `none`). A refused request
    /// changes nothing.
    @Test(
        arguments: [
            (#"{"id": "1234567890", "uri": "tok"}"#, "invalid_push_token"),
            (#"{"id": "1234567890", "os": "ios", "uri": "tok"}"#, "invalid_push_token"),
            (#"{"id": "1234567890", "os": "ios", "uri": "\#(PushTokens.fcm("x"))"}"#, "invalid_push_token"),
            (#"{"id": "1234567890", "os": "windows"}"#, "invalid_platform"),
            (#"{"id": "1234567890", "culture": "russian"}"#, "invalid_culture"),
            (#"{"id": "1234567890", "tags": ["bad tag"]}"#, "invalid_tags"),
            (#"{"id": "1234567890", "uri": "none"}"#, nil),
            (#"{"id": "1234567890", "uri": "\#(PushTokens.apns("x"))"}"#, nil),
            (#"{"id": "1234567890", "uri": "\#(PushTokens.fcm("x"))"}"#, nil),
            (#"{"id": "1234567890", "os": "android", "uri": "\#(PushTokens.fcm("x"))", "culture": "en-us"}"#, nil),
        ] as [(String, String?)])
    func unsubscribeChecksEachFieldWhenPresent(_ body: String, _ code: String?) async throws {
        try await APIFixture.with { api in
            let token = try await TestTokens.token("u1")
            #expect(try await api.client.send(.post, "/Subscribe.ashx", token: token, json: Self.body(uri: PushTokens.apns("d"), tags: [])).status == 200)
            let reply = try await api.client.send(.post, "/Unsubscribe.ashx", token: token, json: body)
            if let code {
                #expect(reply.status == 400)
                #expect(reply.errorCode == code)
                #expect(try await api.store.devices.device(id: "1234567890")?.users.map(\.userId) == ["u1"], "nothing changed")
            } else {
                #expect(reply.status == 200, "\(reply.errorCode)")
                #expect(try await api.store.devices.device(id: "1234567890")?.users.isEmpty == true)
            }
        }
    }

    @Test func errorsUseTheSeedFormat() async throws {
        try await APIFixture.with { api in
            let token = try await TestTokens.token("u1")
            let cases: [(String, String)] = [
                (Self.body(os: "windows", uri: "none", tags: []), "invalid_platform"),
                (Self.body(culture: "russian", uri: "none", tags: []), "invalid_culture"),
                (Self.body(uri: "qweasdzxc", tags: []), "invalid_push_token"),
                (Self.body(uri: "none", tags: ["bad tag"]), "invalid_tags"),
                (#"{"os": "ios", "culture": "ru-ru", "uri": "none"}"#, "missing_field"),
                (#"{"os": "ios", "culture": "ru-ru", "id": "1", "uri": "none", "user": "admin"}"#, "unknown_field"),
                (#"{"os": "ios", "OS": "android", "culture": "ru-ru", "id": "1", "uri": "none"}"#, "invalid_json"),
                ("[1, 2]", "invalid_json"),
                ("not json", "invalid_json"),
            ]
            for (body, code) in cases {
                let reply = try await api.client.send(.post, "/Subscribe.ashx", token: token, json: body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == code, "\(body)")
            }
            #expect(try await api.store.devices.list().isEmpty)

            // Unsubscribe checks what is present: `uri` must be a string even without `os`
            // (a number was accepted; found by schemathesis).
            for body in [#"{"id": "1", "uri": -5.8e16}"#, #"{"id": "1", "os": null, "uri": true}"#, #"{"id": "1", "culture": 5}"#] {
                let reply = try await api.client.send(.post, "/Unsubscribe.ashx", token: token, json: body)
                #expect(reply.status == 400 && reply.errorCode == "invalid_json", "\(body): \(reply.text)")
            }
            // A `uri` without `os` is a token of either platform, or `none` (docs/api.md).
            #expect(try await api.client.send(.post, "/Unsubscribe.ashx", token: token, json: #"{"id": "1", "uri": "anything"}"#).status == 400)
            #expect(try await api.client.send(.post, "/Unsubscribe.ashx", token: token, json: #"{"id": "1", "uri": "none"}"#).status == 200)
        }
    }
}
