import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

@Suite("NotificationLogRepository")
struct NotificationLogRepositoryTests {
    @Test func entriesAfterAPositionCountAndRetention() async throws {
        try await TestStore.with { store, database in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            // Position 3 fails: a gap the app sees and cannot fetch.
            try await JournalSeed.record(
                store, deviceId: "d1", userId: "u1", messageKeys: (1...5).map { "m\($0)" }, state: { $0 == 3 ? .failed : .sent },
                payload: { "{\"n\":\($0)}" }
            )

            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0).map(\.position) == [1, 2, 4, 5])
            let page = try await store.notificationLog.entries(deviceId: "d1", after: 1, limit: 2)
            #expect(page.map(\.position) == [2, 4])
            #expect(page.map(\.payload) == ["{\"n\":2}", "{\"n\":4}"])
            #expect(page.map(\.userId) == ["u1", "u1"])
            #expect(page.map(\.deliveryKey) == [2, 4].map { DeliveryKey(messageKey: "m\($0)", deviceId: "d1", userId: "u1") })
            #expect(try await store.notificationLog.count(deviceId: "d1", after: 2) == 2)
            #expect(try await store.notificationLog.count(deviceId: "d1", app: "other", after: 0) == 0)
            #expect(try await store.notificationLog.entries(deviceId: "unknown", after: 0).isEmpty)

            // Older than the log retention (30 days): no longer fetchable.
            try await database.admin.execute("UPDATE journal SET recorded_at = now() - interval '31 days' WHERE position <= 2")
            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0).map(\.position) == [4, 5])
        }
    }

    @Test func entriesVisibleToOneUserOfASharedDevice() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u2"))
            for (key, user) in [("m1", "u1"), ("m2", "u2"), ("m3", "0"), ("m4", "u1")] {
                try await JournalSeed.record(store, deviceId: "d1", userId: user, messageKeys: [key], eventId: "E")
            }

            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0).map(\.position) == [1, 2, 3, 4])
            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0, visibleTo: "u1").map(\.position) == [1, 3, 4])
            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0, visibleTo: "u2").map(\.position) == [2, 3])
            #expect(try await store.notificationLog.count(deviceId: "d1", after: 1, visibleTo: "u1") == 2)
            #expect(try await store.notificationLog.count(deviceId: "d1", after: 0, visibleTo: "u3") == 1)
        }
    }
}
