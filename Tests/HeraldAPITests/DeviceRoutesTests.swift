import Crypto
import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Hummingbird
import Testing

/// `/v1/devices/{deviceId}` and `/v1/me/settings`, in process over a real database.
@Suite("/v1 devices and settings")
struct DeviceRoutesTests {
    static func device(platform: String = "ios", token: String, culture: String = "ru-RU", tags: [String]? = nil, extra: String = "") -> String {
        var fields = [#""platform": "\#(platform)""#, #""token": "\#(token)""#, #""culture": "\#(culture)""#]
        if let tags { fields.append(#""tags": [\#(tags.map { "\"\($0)\"" }.joined(separator: ","))]"#) }
        if !extra.isEmpty { fields.append(extra) }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    @Test func registerRefreshAndReadBack() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u1")
            let first = PushTokens.apns("first")
            let created = try await api.client.send(.put, "/v1/devices/phone-1", token: user, json: Self.device(token: first, tags: ["news"]))
            #expect(created.status == 201)
            #expect(created.json["hasToken"] as? Bool == true)
            #expect(created.json["tokenFingerprint"] as? String == String(SHA256.hexDigest(Array(first.utf8)).prefix(16)))
            #expect(created.json["tags"] as? [String] == ["news"])
            #expect(created.json["lastPosition"] as? Int == 0)
            #expect(!created.text.contains(first))

            // Token refresh (seed 003: onTokenRefresh → PUT again).
            let second = PushTokens.apns("second")
            #expect(try await api.client.send(.put, "/v1/devices/phone-1", token: user, json: Self.device(token: second)).status == 200)
            let read = try await api.client.send(.get, "/v1/devices/phone-1", token: user)
            #expect(read.status == 200)
            #expect(read.json["tokenFingerprint"] as? String == String(SHA256.hexDigest(Array(second.utf8)).prefix(16)))
            #expect(read.json["tags"] == nil)
            #expect(try await api.store.devices.subscriptions(forUsers: ["u1"]).map(\.token) == [second])

            // `none` unsubscribes (seed 001): the server tells the app it holds no token.
            #expect(try await api.client.send(.put, "/v1/devices/phone-1", token: user, json: Self.device(token: "NONE")).status == 200)
            let none = try await api.client.send(.get, "/v1/devices/phone-1", token: user)
            #expect(none.json["hasToken"] as? Bool == false)
            #expect(none.json["tokenFingerprint"] == nil)
            #expect(try await api.store.devices.subscriptions(forUsers: ["u1"]).isEmpty)
        }
    }

    /// Changing the culture changes what the worker reads (the subscription), and so the
    /// language of the next pushes.
    @Test func cultureChangeRendersInTheNewCulture() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u1")
            let token = PushTokens.apns("c")
            #expect(try await api.client.send(.put, "/v1/devices/d", token: user, json: Self.device(token: token, culture: "ru-ru")).status == 201)
            #expect(try await api.client.send(.put, "/v1/devices/d", token: user, json: Self.device(token: token, culture: "en-us")).status == 200)
            let subscription = try #require(try await api.store.devices.subscriptions(forUsers: ["u1"]).first)
            #expect(subscription.culture == "en-US")

            let catalog = try TemplateCatalog(
                templates: [
                    Template(
                        eventId: "TransferIssued", culture: "ru-RU", platform: .ios, title: "Wallet One", body: "Вам поступил перевод {0}",
                        metadata: .defaults(for: "TransferIssued")),
                    Template(
                        eventId: "TransferIssued", culture: "en-US", platform: .ios, title: "Wallet One", body: "You received a transfer {0}",
                        metadata: .defaults(for: "TransferIssued")),
                ], defaultCulture: "ru-RU")
            let event = Event(id: "TransferIssued", type: .message, dateTime: EventTimestamp(date: Date()), params: [EventParameter(name: "n", value: "10")])
            #expect(try catalog.render(event, culture: subscription.culture, platform: subscription.platform).body == "You received a transfer 10")
        }
    }

    @Test func exclusiveMovesTheDeviceAndDeleteRemovesOnlyTheCaller() async throws {
        try await APIFixture.with { api in
            let token = PushTokens.fcm("shared")
            let alice = try await TestTokens.token("alice")
            let bob = try await TestTokens.token("bob")
            #expect(try await api.client.send(.put, "/v1/devices/tablet", token: alice, json: Self.device(platform: "android", token: token)).status == 201)
            #expect(try await api.client.send(.put, "/v1/devices/tablet", token: bob, json: Self.device(platform: "android", token: token)).status == 200)
            #expect(try await api.store.devices.device(id: "tablet")?.users.map(\.userId) == ["alice", "bob"])

            // Bob leaves: Alice stays, the device stays.
            #expect(try await api.client.send(.delete, "/v1/devices/tablet", token: bob).status == 204)
            #expect(try await api.store.devices.device(id: "tablet")?.users.map(\.userId) == ["alice"])

            // Bob logs in again, telling the server the device is his alone now.
            let exclusive = Self.device(platform: "android", token: token, extra: #""exclusive": true"#)
            #expect(try await api.client.send(.put, "/v1/devices/tablet", token: bob, json: exclusive).status == 200)
            #expect(try await api.store.devices.device(id: "tablet")?.users.map(\.userId) == ["bob"])
            #expect(try await api.client.send(.get, "/v1/devices/tablet", token: alice).errorCode == "device_not_found")

            // The last user leaving deletes the device.
            #expect(try await api.client.send(.delete, "/v1/devices/tablet", token: bob).status == 204)
            #expect(try await api.store.devices.device(id: "tablet") == nil)
        }
    }

    /// A user cannot read or change another user's device: every such call is 404, and a
    /// registration with another token cannot make the owner's pushes reach it.
    @Test func anotherUsersDeviceIsNotFound() async throws {
        try await APIFixture.with { api in
            let owner = try await TestTokens.token("owner")
            let intruder = try await TestTokens.token("intruder")
            let token = PushTokens.apns("owner phone")
            #expect(try await api.client.send(.put, "/v1/devices/p", token: owner, json: Self.device(token: token)).status == 201)
            try await api.logSent(deviceId: "p", user: "owner", count: 2)

            for (method, path, body) in [
                (HTTPMethodName.get, "/v1/devices/p", nil), (.delete, "/v1/devices/p", nil),
                (.get, "/v1/devices/p/notifications?after=0", nil), (.post, "/v1/devices/p/notifications/resend", #"{"after": 0}"#),
            ] as [(HTTPMethodName, String, String?)] {
                let reply = try await api.client.send(method.method, path, token: intruder, json: body)
                #expect(reply.status == 404, "\(path)")
                #expect(reply.errorCode == "device_not_found")
            }
            // Unsubscribing someone else's device through the legacy endpoint changes nothing.
            #expect(try await api.client.send(.post, "/Unsubscribe.ashx", token: intruder, json: #"{"id": "p", "tags": []}"#).status == 200)
            #expect(try await api.store.devices.device(id: "p")?.users.map(\.userId) == ["owner"])

            // Registering with the intruder's own token takes the device over alone; the owner's
            // pushes do not follow.
            let intruderToken = PushTokens.apns("intruder phone")
            #expect(try await api.client.send(.put, "/v1/devices/p", token: intruder, json: Self.device(token: intruderToken)).status == 200)
            #expect(try await api.store.devices.subscriptions(forUsers: ["owner"]).isEmpty)
            #expect(try await api.store.devices.subscriptions(forUsers: ["intruder"]).map(\.token) == [intruderToken])
            #expect(resendsAreEmpty(api))
        }
    }

    private func resendsAreEmpty(_ api: APIFixture) -> Bool { api.resends.pushes.isEmpty }

    @Test func settingsOffThenOn() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u1")
            #expect(try await api.client.send(.put, "/v1/devices/d", token: user, json: Self.device(token: PushTokens.apns("d"))).status == 201)
            let defaults = try await api.client.send(.get, "/v1/me/settings", token: user)
            #expect(defaults.json["pushesEnabled"] as? Bool == true)
            #expect(defaults.json["updatedAt"] == nil)

            let off = try await api.client.send(.put, "/v1/me/settings", token: user, json: #"{"pushesEnabled": false, "mutedTags": ["News"]}"#)
            #expect(off.status == 200)
            #expect(off.json["pushesEnabled"] as? Bool == false)
            #expect(off.json["mutedTags"] as? [String] == ["news"])
            var subscription = try #require(try await api.store.devices.subscriptions(forUsers: ["u1"]).first)
            #expect(subscription.isEnabled == false)
            #expect(subscription.mutedTags == ["news"])

            #expect(try await api.client.send(.put, "/v1/me/settings", token: user, json: #"{"pushesEnabled": true}"#).status == 200)
            subscription = try #require(try await api.store.devices.subscriptions(forUsers: ["u1"]).first)
            #expect(subscription.isEnabled == true)
            #expect(subscription.mutedTags == ["news"])
            #expect(try await api.client.send(.put, "/v1/me/settings", token: user, json: "{}").errorCode == "missing_field")
        }
    }
}

/// Methods as plain values for table-driven tests.
enum HTTPMethodName {
    case get, put, post, delete
    var method: HTTPTypes.HTTPRequest.Method {
        switch self {
        case .get: .get
        case .put: .put
        case .post: .post
        case .delete: .delete
        }
    }
}
