import Foundation
import HTTPTypes
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Hummingbird
import Testing

@testable import HeraldAPI

/// `/v1/devices/{deviceId}/notifications` and `…/resend` (seed 002), in process.
@Suite("/v1 missed notifications and resend")
struct NotificationRoutesTests {
    static func register(_ api: APIFixture, _ user: String, device: String = "d1", token: String = PushTokens.apns("d1")) async throws -> String {
        let bearer = try await TestTokens.token(user)
        let body = #"{"platform": "ios", "token": "\#(token)", "culture": "en-US"}"#
        let status = try await api.client.send(.put, "/v1/devices/\(device)", token: bearer, json: body).status
        #expect(status == 201 || status == 200)
        return bearer
    }

    @Test func missedAfterNWithPagesAndVisibility() async throws {
        try await APIFixture.with { api in
            let u1 = try await Self.register(api, "u1")
            let u2 = try await Self.register(api, "u2")  // same token: the two-wallet case
            try await api.logSent(deviceId: "d1", user: "u1", count: 3)
            try await api.logSent(deviceId: "d1", user: "u2", count: 1, prefix: "other")

            let all = try await api.client.send(.get, "/v1/devices/d1/notifications?after=1", token: u1)
            #expect(all.status == 200)
            let items = try #require(all.json["notifications"] as? [[String: Any]])
            #expect(items.compactMap { $0["position"] as? Int } == [2, 3])
            #expect(all.json["lastPosition"] as? Int == 4)
            #expect(all.json["hasMore"] as? Bool == false)
            let payload = try #require(items.first?["payload"] as? [String: Any])
            #expect((payload["aps"] as? [String: Any])?["alert"] as? String == "push 2")

            let page = try await api.client.send(.get, "/v1/devices/d1/notifications?after=0&limit=2", token: u1)
            #expect((page.json["notifications"] as? [[String: Any]])?.count == 2)
            #expect(page.json["hasMore"] as? Bool == true)

            let other = try await api.client.send(.get, "/v1/devices/d1/notifications?after=0", token: u2)
            #expect((other.json["notifications"] as? [[String: Any]])?.compactMap { $0["position"] as? Int } == [4])

            #expect(try await api.client.send(.get, "/v1/devices/d1/notifications?after=-1", token: u1).errorCode == "invalid_parameter")
            #expect(try await api.client.send(.get, "/v1/devices/d1/notifications?limit=1000", token: u1).errorCode == "invalid_parameter")
        }
    }

    @Test func resendSendsTheLoggedPushesAgain() async throws {
        try await APIFixture.with { api in
            let bearer = try await Self.register(api, "u1")
            try await api.logSent(deviceId: "d1", user: "u1", count: 3)
            let reply = try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: bearer, json: #"{"after": 1}"#)
            #expect(reply.status == 200)
            #expect(reply.json["missed"] as? Int == 2)
            #expect(reply.json["sent"] as? Int == 2)
            #expect(reply.json["summary"] as? Bool == false)
            let pushes = api.resends.pushes
            #expect(pushes.map(\.position) == [2, 3])
            #expect(pushes.map(\.target.token) == [PushTokens.apns("d1"), PushTokens.apns("d1")])
            #expect(pushes.first?.payload.apns?.pushType == .alert)
            #expect(pushes.first?.payload.apns?.collapseId == DeliveryKey(messageKey: "m2", deviceId: "d1", userId: "u1").rawValue)
            #expect(pushes.first?.payload.json["aps"]?["alert"] == .string("push 2"))

            // Nothing missed: nothing sent.
            let none = try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: bearer, json: #"{"after": 3}"#)
            #expect(none.json["missed"] as? Int == 0)
            #expect(api.resends.pushes.count == 2)
        }
    }

    @Test func moreThanTheThresholdSendsOneSummary() async throws {
        try await APIFixture.with(configure: { $0.resend.summaryThreshold = 3 }) { api in
            let bearer = try await Self.register(api, "u1")
            try await api.logSent(deviceId: "d1", user: "u1", count: 5)
            let reply = try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: bearer, json: #"{"after": 0}"#)
            #expect(reply.json["missed"] as? Int == 5)
            #expect(reply.json["summary"] as? Bool == true)
            #expect(reply.json["sent"] as? Int == 1)
            let push = try #require(api.resends.pushes.first)
            #expect(api.resends.pushes.count == 1)
            #expect(push.eventId == "MissedNotifications")
            #expect(push.payload.json["aps"]?["alert"] == .string("You missed 5 notifications. Open the app to see them."))
        }
    }

    @Test func aDeadTokenStopsTheResendAndMarksTheDevice() async throws {
        try await APIFixture.with { api in
            let bearer = try await Self.register(api, "u1")
            try await api.logSent(deviceId: "d1", user: "u1", count: 2)
            api.resends.answer(.tokenDead(reason: "Unregistered"))
            let reply = try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: bearer, json: #"{"after": 0}"#)
            #expect(reply.json["sent"] as? Int == 0)
            #expect(reply.json["failed"] as? Int == 2)
            #expect(api.resends.pushes.count == 1)
            #expect(try await api.store.devices.device(id: "d1")?.tokenState == .dead)
            #expect(
                try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: bearer, json: #"{"after": 0}"#).errorCode == "device_not_found")
        }
    }

    @Test func withoutAHandlerResendIsUnavailable() async throws {
        try await APIFixture.with(resendHandler: false) { api in
            let bearer = try await Self.register(api, "u1")
            let reply = try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: bearer, json: #"{"after": 0}"#)
            #expect(reply.status == 503)
            #expect(reply.errorCode == "resend_unavailable")
            #expect(reply.headers[.retryAfter] == "60")
        }
    }

    /// A logged payload is sent again as it was: numbers keep their exact text.
    @Test func loggedNumbersAreResentExactly() throws {
        let logged = #"{"aps":{"alert":"x","badge":12345678901234567890123},"eid":"E","ratio":0.1000000000000000055511151231257827}"#
        let key = DeliveryKey(messageKey: "m", deviceId: "d", userId: "u")
        let payload = try #require(ResendPlanner.payload(logged: logged, deliveryKey: key, platform: .ios, token: "t"))
        #expect(payload.json["aps"]?["badge"] == .number("12345678901234567890123"))
        #expect(payload.json["ratio"] == .number("0.1000000000000000055511151231257827"))
        #expect(payload.body == Array(logged.utf8), "the same bytes as logged (canonical JSON)")
    }

    @Test func fcmPayloadsGetTheCurrentToken() throws {
        let logged = #"{"message":{"token":"old-token","data":{"msg":"hi","eid":"E"}}}"#
        let key = DeliveryKey(messageKey: "m", deviceId: "d", userId: "u")
        let payload = try #require(ResendPlanner.payload(logged: logged, deliveryKey: key, platform: .android, token: "new-token"))
        #expect(payload.json["message"]?["token"] == .string("new-token"))
        #expect(payload.json["message"]?["data"]?["msg"] == .string("hi"))
        #expect(payload.apns == nil)
        let background = try #require(
            ResendPlanner.payload(logged: #"{"aps":{"content-available":1},"eid":"E"}"#, deliveryKey: key, platform: .ios, token: "t"))
        #expect(background.apns?.pushType == .background)
        #expect(background.apns?.priority == 5)
        #expect(ResendPlanner.payload(logged: "not json", deliveryKey: key, platform: .ios, token: "t") == nil)
    }
}
