import HeraldCore
import HeraldStore
import HeraldTesting
import Testing

@testable import HeraldWorker

/// The broadcast audience as the planner's source of targeted subscriptions: with a real
/// database, against the per-user read it replaces.
@Suite("Broadcast audience")
struct BroadcastAudienceTests {
    @Test func aCurrentSnapshotAnswersUsersAsTheDatabaseDoesUntilSomethingChanges() async throws {
        try await TestStore.with { store, _ in
            func device(_ id: String, _ user: String, token: String? = "t", branch: String? = nil) -> DeviceRegistration {
                DeviceRegistration(deviceId: id, platform: .ios, token: token.map { "\($0)-\(id)" }, culture: "ru-RU", userId: user, branchId: branch)
            }
            try await store.devices.importDevices([
                device("phone", "u1"), device("tablet", "u1", branch: "b1"), device("shared", "u1"), device("shared", "u4"),
                device("old", "u2"), device("untokened", "u3", token: nil),
            ])
            // As the change listener does once it listens; the store was not started.
            store.subscriptionCache.setLive(true)
            let audience = BroadcastAudience(devices: store.devices, changes: store.subscriptionCache, ttl: .seconds(60), limit: 100_000)
            #expect(audience.current() == nil, "nothing is loaded before the first broadcast")

            _ = try await audience.snapshot()
            let users = ["u1", "u2", "u3", "u4", "nobody"]
            let current = try #require(audience.current())
            #expect(current.indexesUsers)
            let read = Dictionary(grouping: try await store.devices.subscriptions(forUsers: users), by: \.userId)
            for user in users {
                #expect(Set(current.subscriptions(ofUser: user).map(\.deviceId)) == Set((read[user] ?? []).map(\.deviceId)), "user \(user)")
            }
            #expect(Set(current.subscriptions(ofUser: "u1").map(\.deviceId)) == ["phone", "tablet", "shared"])
            #expect(current.subscriptions(ofUser: "u3").isEmpty && current.subscriptions(ofUser: "nobody").isEmpty)

            // Any change notification: the snapshot may be stale, the database is asked again.
            store.subscriptionCache.invalidate(userId: "u2")
            #expect(audience.current() == nil)
            // Loaded again, it is current again; no longer live (no notifications flowing),
            // nothing can be known current.
            let reloaded = BroadcastAudience(devices: store.devices, changes: store.subscriptionCache, ttl: .seconds(60), limit: 100_000)
            _ = try await reloaded.snapshot()
            #expect(reloaded.current() != nil)
            store.subscriptionCache.setLive(false)
            #expect(reloaded.current() == nil)
        }
    }

    @Test func usersWhoseSubscriptionsAreNotContiguousLeaveNoIndex() {
        func subscription(_ device: String, _ user: String) -> Subscription {
            Subscription(deviceId: device, token: "t", platform: .ios, userId: user, culture: "ru-RU")
        }
        let ordered = BroadcastAudience.Snapshot([subscription("a", "u1"), subscription("b", "u1"), subscription("c", "u2")])
        #expect(ordered.indexesUsers)
        #expect(ordered.subscriptions(ofUser: "u1").map(\.deviceId) == ["a", "b"] && ordered.subscriptions(ofUser: "u2").map(\.deviceId) == ["c"])
        let scattered = BroadcastAudience.Snapshot([subscription("a", "u1"), subscription("c", "u2"), subscription("b", "u1")])
        #expect(!scattered.indexesUsers)
    }
}
