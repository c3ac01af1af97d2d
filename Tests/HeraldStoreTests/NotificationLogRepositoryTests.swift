import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

@Suite("NotificationLogRepository")
struct NotificationLogRepositoryTests {
    @Test func entriesAfterAPositionCountAndExpiry() async throws {
        try await StoreFixture.with { store, database in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            let claims = (1...5).map { DeliveryJournalTests.claim("m\($0)", "d1") }
            _ = try await store.journal.claim(claims)
            // Position 3 fails: a gap the app sees and cannot fetch.
            try await store.journal.record(claims.enumerated().map { index, claim in
                index == 2 ? .failed(claim.deliveryKey, attempts: 1, reason: "BadTopic")
                    : .sent(claim.deliveryKey, attempts: 1, eventId: "E\(index + 1)", payload: "{\"n\":\(index + 1)}")
            })

            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0).map(\.position) == [1, 2, 4, 5])
            let page = try await store.notificationLog.entries(deviceId: "d1", after: 1, limit: 2)
            #expect(page.map(\.position) == [2, 4])
            #expect(page.map(\.payload) == ["{\"n\":2}", "{\"n\":4}"])
            #expect(page.map(\.userId) == ["u1", "u1"])
            #expect(try await store.notificationLog.count(deviceId: "d1", after: 2) == 2)
            #expect(try await store.notificationLog.count(deviceId: "d1", app: "other", after: 0) == 0)
            #expect(try await store.notificationLog.entries(deviceId: "unknown", after: 0).isEmpty)

            try await database.admin.execute("UPDATE notification_log SET expires_at = now() - interval '1 second' WHERE position <= 2")
            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0).map(\.position) == [4, 5])
            #expect(try await store.notificationLog.expire() == 2)
            #expect(try await store.notificationLog.expire() == 0)
        }
    }

    @Test func entriesVisibleToOneUserOfASharedDevice() async throws {
        try await StoreFixture.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u2"))
            let claims = [
                DeliveryJournalTests.claim("m1", "d1", user: "u1"), DeliveryJournalTests.claim("m2", "d1", user: "u2"),
                DeliveryJournalTests.claim("m3", "d1", user: "0"), DeliveryJournalTests.claim("m4", "d1", user: "u1"),
            ]
            _ = try await store.journal.claim(claims)
            try await store.journal.record(claims.map { .sent($0.deliveryKey, attempts: 1, eventId: "E", payload: "{}") })

            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0).map(\.position) == [1, 2, 3, 4])
            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0, visibleTo: "u1").map(\.position) == [1, 3, 4])
            #expect(try await store.notificationLog.entries(deviceId: "d1", after: 0, visibleTo: "u2").map(\.position) == [2, 3])
            #expect(try await store.notificationLog.count(deviceId: "d1", after: 1, visibleTo: "u1") == 2)
            #expect(try await store.notificationLog.count(deviceId: "d1", after: 0, visibleTo: "u3") == 1)
        }
    }
}
