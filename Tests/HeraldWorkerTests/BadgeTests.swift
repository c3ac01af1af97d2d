import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldTesting
import HeraldWorker
import Testing

@testable import HeraldStore

/// The unread badge (seed 000 requirement 8): each push carries how many pushes its user has
/// not read on the device, counted in the claim from the read positions the app reports.
@Suite("Unread badge", .timeLimit(.minutes(2)))
struct BadgeTests {
    static func modern(_ fixture: WorkerFixture) -> WorkerConfiguration {
        var configuration = fixture.configuration()
        configuration.payloadBuilder = PayloadBuilder(profile: .modern)
        return configuration
    }

    /// The APNs `aps.badge`, or the FCM `data.badge`, of a recorded push.
    static func badge(_ sent: RecordingSender.Sent) -> Int? {
        if sent.platform == .ios { return (sent.json["aps"] as? [String: Any])?["badge"] as? Int }
        return (((sent.json["message"] as? [String: Any])?["data"] as? [String: Any])?["badge"] as? String).flatMap { Int($0) }
    }

    static func badges(_ sender: RecordingSender, device: String) -> [Int?] {
        sender.sent.filter { $0.deviceId == device }.sorted { $0.position < $1.position }.map(badge)
    }

    @Test func theCountAfterNPushesAndAfterARead() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1"), TestEvents.device("d2", user: "u1", platform: .android)])
            let sender = RecordingSender()
            try await fixture.withWorker(sender: sender, configuration: Self.modern(fixture)) { worker in
                try await fixture.publish((1...3).map { TestEvents.xml(users: ["u1"], sequence: $0) })
                try await waitUntil("three pushes to each device", timeout: .seconds(20)) { sender.count == 6 }
                #expect(Self.badges(sender, device: "d1") == [1, 2, 3])
                #expect(Self.badges(sender, device: "d2") == [1, 2, 3])

                // The app read d1 up to position 2 (once the outcomes are recorded: the count is the journal's).
                try await waitUntil("three messages acknowledged", timeout: .seconds(20)) { worker.statistics.acked == 3 }
                let move = try await fixture.store.devices.markRead(deviceId: "d1", userId: "u1", position: 2)
                #expect(move == ReadMove(state: ReadState(position: 2, unread: 1), previousPosition: 0))
                // Reads only move forward; the answer says where the read position was.
                #expect(
                    try await fixture.store.devices.markRead(deviceId: "d1", userId: "u1", position: 1)
                        == ReadMove(state: ReadState(position: 2, unread: 1), previousPosition: 2))

                try await fixture.publish(TestEvents.xml(users: ["u1"], sequence: 4))
                try await waitUntil("the fourth push", timeout: .seconds(20)) { sender.count == 8 }
                #expect(Self.badges(sender, device: "d1") == [1, 2, 3, 2])
                #expect(Self.badges(sender, device: "d2") == [1, 2, 3, 4], "a read on d1 is d1's")
                try await waitUntil("four messages acknowledged", timeout: .seconds(20)) { worker.statistics.acked == 4 }
            }
        }
    }

    /// Seed 000's two wallets on one phone: each user's reads are their own, and the other
    /// user's pushes are not counted as this user's unread ones.
    @Test func twoUsersOnOneDevice() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("shared", user: "u2"), TestEvents.device("shared", user: "u3")])
            let sender = RecordingSender()
            try await fixture.withWorker(sender: sender, configuration: Self.modern(fixture)) { worker in
                try await fixture.publish((1...2).map { TestEvents.xml(users: ["u2"], sequence: $0) })
                try await waitUntil("u2's two pushes", timeout: .seconds(20)) { sender.count == 2 }
                try await fixture.publish(TestEvents.xml(users: ["u3"], sequence: 3))
                try await waitUntil("u3's push", timeout: .seconds(20)) { sender.count == 3 }
                #expect(Self.badges(sender, device: "shared") == [1, 2, 3], "nobody has read anything: every push counts")

                // The counts of other users' pushes are the journal's: wait until they are recorded.
                try await waitUntil("three messages acknowledged", timeout: .seconds(20)) { worker.statistics.acked == 3 }
                _ = try await fixture.store.devices.markRead(deviceId: "shared", userId: "u2", position: 2)
                _ = try await fixture.store.devices.markRead(deviceId: "shared", userId: "u3", position: 0)
                try await fixture.publish(TestEvents.xml(users: ["u2"], sequence: 4))
                try await waitUntil("u2's third push", timeout: .seconds(20)) { sender.count == 4 }
                try await waitUntil("four messages acknowledged", timeout: .seconds(20)) { worker.statistics.acked == 4 }
                try await fixture.publish(TestEvents.xml(users: ["u3"], sequence: 5))
                try await waitUntil("u3's second push", timeout: .seconds(20)) { sender.count == 5 }
                // Position 4 (u2): u2 read up to 2, position 3 is u3's → 1 unread.
                // Position 5 (u3): u3 read nothing; positions 1, 2, 4 are u2's → 2 unread (3 and 5).
                #expect(Self.badges(sender, device: "shared") == [1, 2, 3, 1, 2])
            }
            #expect(try await fixture.store.devices.readState(deviceId: "shared", userId: "u2") == ReadState(position: 2, unread: 1))
            #expect(try await fixture.store.devices.readState(deviceId: "shared", userId: "u3") == ReadState(position: 0, unread: 2))
        }
    }

    /// The legacy profile is unchanged unless `worker.legacy_badge` is on.
    @Test func theLegacyProfileCarriesTheBadgeOnlyWhenSwitchedOn() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1"), TestEvents.device("d2", user: "u1", platform: .android)])
            let off = RecordingSender()
            try await fixture.withWorker(sender: off) { _ in
                try await fixture.publish(TestEvents.xml(users: ["u1"], sequence: 1))
                try await waitUntil("two pushes", timeout: .seconds(20)) { off.count == 2 }
            }
            #expect(off.sent.allSatisfy { Self.badge($0) == nil })
            #expect(off.sent.allSatisfy { !String(decoding: $0.body, as: UTF8.self).contains("badge") })

            var configuration = fixture.configuration()
            configuration.payloadBuilder = PayloadBuilder(profile: .legacy, legacyBadge: true)
            let on = RecordingSender()
            try await fixture.withWorker(sender: on, configuration: configuration) { _ in
                try await fixture.publish(TestEvents.xml(users: ["u1"], sequence: 2))
                try await waitUntil("two pushes", timeout: .seconds(20)) { on.count == 2 }
            }
            #expect(Self.badges(on, device: "d1") == [2])
            #expect(Self.badges(on, device: "d2") == [2])
            let ios = try #require(on.sent.first { $0.platform == .ios })
            #expect((ios.json["aps"] as? [String: Any])?["acme_eid"] as? String == "TransferIssued", "still the seed 000 shape")
        }
    }
}
