import Foundation
@testable import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTesting
import HTTPTypes
import Testing

/// `PUT /v1/devices/{id}/read` and `markRead`: what the app has read, which the badge counts from.
@Suite("/v1 read positions and the badge")
struct ReadRoutesTests {
    static func logWithBadges(_ api: APIFixture, device: String, user: String, count: Int) async throws {
        try await JournalSeed.record(api.store, deviceId: device, userId: user, messageKeys: (1...count).map { "\(device)-\(user)-\($0)" }, payload: { n in
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
