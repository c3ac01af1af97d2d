import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import HeraldTesting
import Testing

@testable import HeraldAPI

/// `/v1/admin/…`: the operators' support lookups, behind their own bearer key.
@Suite("/v1/admin support lookups")
struct AdminRoutesTests {
    static let adminKey = "admin-key-for-the-support-desk-0123456789"

    static func withAdmin<T: Sendable>(_ body: @escaping @Sendable (APIFixture) async throws -> T) async throws -> T {
        try await APIFixture.with(configure: { $0.admin = AdminConfiguration(token: adminKey) }, body)
    }

    @Test func anAppUsersTokenIsForbiddenAndOnlyTheAdminKeyOpensTheRoutes() async throws {
        try await Self.withAdmin { api in
            let user = try await TestTokens.token("u1")
            for path in ["/v1/admin/messages/m1", "/v1/admin/users/u1/deliveries"] {
                let asUser = try await api.client.send(.get, path, token: user)
                #expect(asUser.status == 403, "\(path)")
                #expect(asUser.errorCode == "forbidden")
                let anonymous = try await api.client.send(.get, path)
                #expect(anonymous.status == 401)
                let forged = try await api.client.send(
                    .get, path, token: try await TestTokens.token("u1", secret: Array("another-secret-of-at-least-32-bytes!!".utf8)))
                #expect(forged.status == 401)
                let nearly = try await api.client.send(.get, path, token: String(Self.adminKey.dropLast()) + "x")
                #expect(nearly.status == 401)
            }
            // The admin key is no app token either.
            #expect(try await api.client.send(.get, "/v1/me/settings", token: Self.adminKey).status == 401)
        }
    }

    @Test func withoutAnAdminKeyTheRoutesDoNotExist() async throws {
        try await APIFixture.with { api in
            let user = try await TestTokens.token("u1")
            #expect(try await api.client.send(.get, "/v1/admin/messages/m1", token: user).status == 404)
        }
    }

    @Test func aMessageAUsersDeliveriesADeadLetterAndAnUnknownMessage() async throws {
        try await Self.withAdmin { api in
            let user = try await TestTokens.token("u1")
            let put = try await api.client.send(
                .put, "/v1/devices/d1", token: user, json: #"{"platform": "ios", "token": "\#(PushTokens.apns("d1"))", "culture": "en-US"}"#)
            #expect(put.status == 201)
            try await api.logSent(deviceId: "d1", user: "u1", count: 2, prefix: "transfer-")

            let message = try await api.client.send(.get, "/v1/admin/messages/transfer-2", token: Self.adminKey)
            #expect(message.status == 200)
            #expect(message.json["summary"] as? String == "sent")
            let deliveries = try #require(message.json["deliveries"] as? [[String: Any]])
            #expect(deliveries.count == 1)
            #expect(deliveries.first?["deviceId"] as? String == "d1")
            #expect(deliveries.first?["position"] as? Int == 2)
            #expect(deliveries.first?["state"] as? String == "sent")
            #expect((deliveries.first?["token"] as? String)?.contains("…") == true)

            let list = try await api.client.send(.get, "/v1/admin/users/u1/deliveries?since=2020-01-01T00:00:00Z&limit=1", token: Self.adminKey)
            #expect(list.status == 200)
            #expect((list.json["deliveries"] as? [[String: Any]])?.first?["messageKey"] as? String == "transfer-2")
            #expect(list.json["hasMore"] as? Bool == true)
            #expect(try await api.client.send(.get, "/v1/admin/users/u1/deliveries?since=yesterday", token: Self.adminKey).errorCode == "invalid_parameter")

            try await api.store.deadLetters.record(DeadLetter(messageKey: "broken", queue: "q", errorCode: "invalid_message", reason: "UserId is missing"))
            let dead = try await api.client.send(.get, "/v1/admin/messages/broken", token: Self.adminKey)
            #expect(dead.status == 200)
            #expect(dead.json["summary"] as? String == "dead_lettered")
            #expect((dead.json["deadLetters"] as? [[String: Any]])?.first?["reason"] as? String == "UserId is missing")

            let unknown = try await api.client.send(.get, "/v1/admin/messages/never-seen", token: Self.adminKey)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "message_not_found")
        }
    }
}
