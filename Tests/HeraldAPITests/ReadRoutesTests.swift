import Foundation
import HTTPTypes
import HeraldCore
import HeraldTesting
import Testing

@testable import HeraldAPI
@testable import HeraldStore

/// `PUT /v1/devices/{id}/read` and `markRead`: what the app has read, which the badge counts from.
@Suite("/v1 read positions and the badge")
struct ReadRoutesTests {
    static func logWithBadges(_ api: APIFixture, device: String, user: String, count: Int) async throws {
        try await JournalSeed.record(
            api.store, deviceId: device, userId: user, messageKeys: (1...count).map { "\(device)-\(user)-\($0)" },
            payload: { n in
                #"{"aps":{"alert":"push \#(n)","badge":\#(n)},"eid":"TransferIssued","userid":"\#(user)"}"#
            })
    }

    @Test func readsMoveForwardAndAnswerTheUnreadCount() async throws {
        try await APIFixture.with { api in
            let u1 = try await NotificationRoutesTests.register(api, "u1")
            try await Self.logWithBadges(api, device: "d1", user: "u1", count: 3)

            let read = try await api.client.send(.put, "/v1/devices/d1/read", token: u1, json: #"{"position": 2}"#)
            #expect(read.status == 200)
            #expect(read.json["position"] as? Int == 2)
            #expect(read.json["unread"] as? Int == 1)
            let back = try await api.client.send(.put, "/v1/devices/d1/read", token: u1, json: #"{"position": 1}"#)
            #expect(back.json["position"] as? Int == 2, "reads only move forward")
            #expect(try await api.client.send(.put, "/v1/devices/d1/read", token: u1, json: #"{"position": 4}"#).errorCode == "invalid_parameter")
            #expect(try await api.client.send(.put, "/v1/devices/d1/read", token: u1, json: #"{}"#).errorCode == "missing_field")

            // Another user's device is not found; the device's other user reads for themselves.
            let stranger = try await TestTokens.token("u9")
            #expect(try await api.client.send(.put, "/v1/devices/d1/read", token: stranger, json: #"{"position": 1}"#).status == 404)

            // Fetching with markRead reads everything on the last page.
            let page = try await api.client.send(.get, "/v1/devices/d1/notifications?after=2&markRead=true", token: u1)
            #expect(page.status == 200)
            #expect(try await api.store.devices.readState(deviceId: "d1", userId: "u1") == ReadState(position: 3, unread: 0))
        }
    }

    @Test func twoUsersOnOneDeviceReadApart() async throws {
        try await APIFixture.with { api in
            let u1 = try await NotificationRoutesTests.register(api, "u1")
            let u2 = try await NotificationRoutesTests.register(api, "u2")  // same device and token
            try await Self.logWithBadges(api, device: "d1", user: "u1", count: 2)
            try await Self.logWithBadges(api, device: "d1", user: "u2", count: 1)
            let first = try await api.client.send(.put, "/v1/devices/d1/read", token: u1, json: #"{"position": 3}"#)
            #expect(first.json["unread"] as? Int == 0, "u2's push at 3 is not u1's")
            #expect(try await api.store.devices.readState(deviceId: "d1", userId: "u2") == ReadState(position: 0, unread: 1))
            _ = u2
        }
    }

    /// A push sent again carries today's unread count, not the one it was first sent with.
    @Test func resentPushesCarryTheCurrentCount() async throws {
        try await APIFixture.with { api in
            let u1 = try await NotificationRoutesTests.register(api, "u1")
            try await Self.logWithBadges(api, device: "d1", user: "u1", count: 3)
            _ = try await api.client.send(.put, "/v1/devices/d1/read", token: u1, json: #"{"position": 1}"#)
            let resend = try await api.client.send(.post, "/v1/devices/d1/notifications/resend", token: u1, json: #"{"after": 1}"#)
            #expect(resend.status == 200)
            let badges = api.resends.pushes.map { push in
                (try? JSONSerialization.jsonObject(with: Data(push.payload.body)) as? [String: Any]).flatMap { ($0["aps"] as? [String: Any])?["badge"] as? Int }
            }
            #expect(badges == [2, 2], "positions 2 and 3 are unread")
        }
    }
}

/// `api.badge_sync`: a read on one device is a read of the same notifications on the user's
/// other devices, which get a badge-only push.
@Suite("/v1 badge sync across a user's devices")
struct BadgeSyncTests {
    @Test func aReadOnOneDeviceUpdatesTheOthersBadge() async throws {
        try await APIFixture.with(configure: { $0.badgeSync = true }) { api in
            let u1 = try await TestTokens.token("u1")
            for (device, body) in [
                ("phone", #"{"platform": "ios", "token": "\#(PushTokens.apns("phone"))", "culture": "en-US"}"#),
                ("tablet", #"{"platform": "android", "token": "\#(PushTokens.fcm("tablet"))", "culture": "en-US"}"#),
            ] {
                #expect(try await api.client.send(.put, "/v1/devices/\(device)", token: u1, json: body).status == 201)
            }
            // Three messages, each to both devices (the tablet had one more before: positions differ).
            let phone = try #require(try await api.store.devices.storeId(deviceId: "phone"))
            let tablet = try #require(try await api.store.devices.storeId(deviceId: "tablet"))
            try await JournalSeed.record(api.store, deviceId: "tablet", userId: "u1", messageKeys: ["older"])
            let keys = ["m1", "m2", "m3"].map { MessageKey(text: $0) }
            let answer = try await api.store.journal.claim(
                ClaimBatch(
                    messages: keys, eventIds: ["E", "E", "E"],
                    deliveries: keys.indices.flatMap {
                        [ClaimBatch.Delivery(message: $0, deviceRef: phone, userId: "u1"), ClaimBatch.Delivery(message: $0, deviceRef: tablet, userId: "u1")]
                    }
                ))
            try await api.store.journal.record(
                answer.positions.indices.map { index in
                    DeliveryRecord(
                        deviceRef: index % 2 == 0 ? phone : tablet, position: answer.positions[index]!, messageId: answer.messageIds[index / 2]!, userId: "u1",
                        state: .sent, attempts: 1, payload: Array("{}".utf8)
                    )
                })
            // Read m1 and m2 on the phone (positions 1–2): on the tablet they are 2–3.
            let read = try await api.client.send(.put, "/v1/devices/phone/read", token: u1, json: #"{"position": 2}"#)
            #expect(read.json["unread"] as? Int == 1)
            #expect(try await api.store.devices.readState(deviceId: "tablet", userId: "u1") == ReadState(position: 3, unread: 1))
            let pushes = api.resends.pushes
            #expect(pushes.map(\.deviceId) == ["tablet"])
            let push = try #require(pushes.first)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(push.payload.body)) as? [String: Any])
            let data = (body["message"] as? [String: Any])?["data"] as? [String: Any]
            #expect(data?["badge"] as? String == "1")
            #expect(data?["silent"] as? String == "1")

            // Reading nothing new sends nothing.
            _ = try await api.client.send(.put, "/v1/devices/phone/read", token: u1, json: #"{"position": 2}"#)
            #expect(api.resends.pushes.count == 1)
        }
    }
}
