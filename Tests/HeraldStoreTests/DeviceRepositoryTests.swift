import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

@Suite("DeviceRepository")
struct DeviceRepositoryTests {
    @Test func subscribeCreatesAndUpdatesADevice() async throws {
        try await TestStore.with { store, _ in
            #expect(try await store.devices.device(id: "d1") == nil)
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1", tags: ["Account", "t1"], zone: "w1", branch: "101"))
            var device = try #require(try await store.devices.device(id: "d1"))
            #expect(device.app == nil)
            #expect(device.platform == .ios)
            #expect(device.token == "token-d1")
            #expect(device.tokenState == .active)
            #expect(device.nextPosition == 1)
            #expect(device.users.map(\.userId) == ["u1"])
            #expect(device.users[0].tags == ["account", "t1"])
            #expect(device.users[0].zoneId == "w1" && device.users[0].branchId == "101")

            // Subscribing again replaces the tags (seed 000: unsubscribed from the others).
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1", token: "new", platform: .android, culture: "en-US", tags: ["t2"]))
            device = try #require(try await store.devices.device(id: "d1"))
            #expect(device.platform == .android && device.token == "new" && device.culture == "en-US")
            #expect(device.users[0].tags == ["t2"])
            #expect(device.users[0].zoneId == nil)

            // No tags: every tag.
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            #expect(try await store.devices.device(id: "d1")?.users[0].tags == nil)
        }
    }

    @Test func twoUsersOnOneDeviceAndAUserSwitch() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("phone", user: "wallet-a"))
            try await store.devices.subscribe(StoreFixture.registration("phone", user: "wallet-b"))
            #expect(try await store.devices.device(id: "phone")?.users.map(\.userId) == ["wallet-a", "wallet-b"])
            let both = try await store.devices.subscriptions(forUsers: ["wallet-a", "wallet-b"])
            #expect(Set(both.map(\.userId)) == ["wallet-a", "wallet-b"])
            #expect(both.allSatisfy { $0.deviceId == "phone" })

            // Another user logs in on the phone; the API decides it replaces the others.
            try await store.devices.subscribe(StoreFixture.registration("phone", user: "wallet-c"), replacingOtherUsers: true)
            #expect(try await store.devices.device(id: "phone")?.users.map(\.userId) == ["wallet-c"])
            #expect(try await store.devices.subscriptions(forUsers: ["wallet-a", "wallet-b"]).isEmpty)
            #expect(try await store.devices.list(userId: "wallet-c").map(\.deviceId) == ["phone"])
        }
    }

    @Test func noneTokenMeansNoToken() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1", token: "NONE"))
            let device = try #require(try await store.devices.device(id: "d1"))
            #expect(device.token == nil)
            #expect(device.users.count == 1)
            #expect(try await store.devices.subscriptions(forUsers: ["u1"]).isEmpty)

            #expect(try await store.devices.setToken("fresh-token", deviceId: "d1"))
            #expect(try await store.devices.subscriptions(forUsers: ["u1"]).map(\.token) == ["fresh-token"])
            #expect(try await store.devices.setToken("none", deviceId: "d1"))
            #expect(try await store.devices.device(id: "d1")?.token == nil)
            #expect(try await store.devices.setToken("x", deviceId: "unknown") == false)
        }
    }

    @Test func aTokenBelongsToOneDeviceOfAnApp() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("old-install", user: "u1", token: "T"))
            try await store.devices.subscribe(StoreFixture.registration("other-app", user: "u1", token: "T", app: "com.acme.b"))
            try await store.devices.subscribe(StoreFixture.registration("new-install", user: "u1", token: "T"))
            #expect(try await store.devices.device(id: "old-install")?.token == nil)
            #expect(try await store.devices.device(id: "new-install")?.token == "T")
            #expect(try await store.devices.device(id: "other-app", app: "com.acme.b")?.token == "T")

            #expect(try await store.devices.setToken("T", deviceId: "old-install"))
            #expect(try await store.devices.device(id: "new-install")?.token == nil)
            let subscriptions = try await store.devices.subscriptions(forUsers: ["u1"])
            #expect(Set(subscriptions.map(\.deviceId)) == ["old-install", "other-app"])
            #expect(subscriptions.first { $0.deviceId == "other-app" }?.app == "com.acme.b")
        }
    }

    @Test func unsubscribeFromTagsAndFromEverything() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "listed", tags: ["a", "b"]))
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "all"))

            #expect(try await store.devices.unsubscribe(deviceId: "d1", tags: ["A"]))
            var users = try #require(try await store.devices.device(id: "d1")).users
            #expect(users.first { $0.userId == "listed" }?.tags == ["b"])
            #expect(users.first { $0.userId == "all" }?.tags == nil)
            #expect(users.first { $0.userId == "all" }?.excludedTags == ["a"])
            let all = try #require(try await store.devices.subscriptions(forUsers: ["all"]).first)
            #expect(all.tags.isEmpty && all.mutedTags == ["a"])

            // Removing the last listed tag unsubscribes that user from the device.
            #expect(try await store.devices.unsubscribe(deviceId: "d1", userId: "listed", tags: ["b", "zzz"]))
            users = try #require(try await store.devices.device(id: "d1")).users
            #expect(users.map(\.userId) == ["all"])

            // Subscribing again clears the exclusions.
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "all"))
            #expect(try await store.devices.device(id: "d1")?.users[0].excludedTags == [])

            // No tags: unsubscribe from everything; the device stays.
            #expect(try await store.devices.unsubscribe(deviceId: "d1"))
            #expect(try await store.devices.device(id: "d1")?.users == [])
            #expect(try await store.devices.unsubscribe(deviceId: "nope") == false)
        }
    }

    @Test func markTokenDeadOnlyForTheSameToken() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1", token: "old"))
            #expect(try await store.devices.setToken("refreshed", deviceId: "d1"))
            // A late answer about the old token must not kill the refreshed one.
            #expect(try await store.devices.markTokenDead(deviceId: "d1", token: "old", reason: "Unregistered") == false)
            #expect(try await store.devices.device(id: "d1")?.tokenState == .active)

            #expect(try await store.devices.markTokenDead(deviceId: "d1", token: "refreshed", reason: "Unregistered"))
            let device = try #require(try await store.devices.device(id: "d1"))
            #expect(device.tokenState == .dead)
            #expect(device.tokenDeadReason == "Unregistered")
            #expect(device.tokenDeadAt != nil)
            #expect(try await store.devices.subscriptions(forUsers: ["u1"]).isEmpty)
            #expect(try await store.devices.markTokenDead(deviceId: "d1", token: "refreshed", reason: "again") == false)

            // The app sends a token again: it lives.
            #expect(try await store.devices.setToken("refreshed", deviceId: "d1"))
            #expect(try await store.devices.device(id: "d1")?.tokenState == .active)
            #expect(try await store.devices.subscriptions(forUsers: ["u1"]).count == 1)
        }
    }

    @Test func subscriptionsApplyTheUsersSettings() async throws {
        try await TestStore.with { store, _ in
            try await store.devices.subscribe(
                StoreFixture.registration("d1", user: "u1", platform: .android, culture: "en-US", tags: ["t1"], zone: "w1", branch: "7"))
            try await store.settings.update(userId: "u1", pushesEnabled: false, mutedTags: ["Promo"])
            let subscription = try #require(try await store.devices.subscriptions(forUsers: ["u1", "nobody"]).first)
            #expect(
                subscription
                    == Subscription(
                        deviceId: "d1", token: "token-d1", platform: .android, userId: "u1", culture: "en-US", zoneId: "w1", branchId: "7",
                        tags: ["t1"], mutedTags: ["promo"], isEnabled: false, app: nil, deviceRef: try await store.devices.storeId(deviceId: "d1")
                    ))
        }
    }

    @Test func allSubscriptionsInPages() async throws {
        try await TestStore.with { store, _ in
            for n in 0..<25 {
                try await store.devices.subscribe(StoreFixture.registration("d\(n)", user: "u\(n % 7)"))
            }
            try await store.devices.subscribe(StoreFixture.registration("silent", user: "u1", token: "none"))
            var seen: [String] = []
            var cursor: SubscriptionPage.Cursor?
            var pages = 0
            repeat {
                let page = try await store.devices.allSubscriptions(after: cursor, limit: 10)
                seen += page.subscriptions.map { "\($0.userId)/\($0.deviceId)" }
                cursor = page.next
                pages += 1
            } while cursor != nil && pages < 10
            #expect(pages == 3)
            #expect(seen.count == 25)
            #expect(Set(seen).count == 25)
            #expect(seen.map { $0.split(separator: "/")[0] } == seen.map { $0.split(separator: "/")[0] }.sorted())
        }
    }

    @Test func importDevicesInBulk() async throws {
        try await TestStore.with { store, database in
            try await store.devices.subscribe(StoreFixture.registration("existing", user: "u0", token: "shared"))
            var rows: [DeviceRegistration] = []
            for n in 0..<5_000 {
                rows.append(StoreFixture.registration("d\(n)", user: "u\(n)", tags: n % 2 == 0 ? [] : ["t\(n % 5)", "X"]))
            }
            rows.append(StoreFixture.registration("d1", user: "second-user"))
            rows.append(StoreFixture.registration("d2", user: "u2", token: "shared", culture: "en-US"))
            let start = ContinuousClock.now
            #expect(try await store.devices.importDevices(rows, chunkSize: 1000) == 5_001)
            print("devices import: \(rate(rows.count, ContinuousClock.now - start)) rows/s (debug build)")

            #expect(try await store.devices.device(id: "d1")?.users.map(\.userId) == ["second-user", "u1"])
            #expect(try await store.devices.device(id: "d1")?.users.last?.tags == ["t1", "x"])
            let d2 = try #require(try await store.devices.device(id: "d2"))
            #expect(d2.token == "shared" && d2.culture == "en-US")
            #expect(try await store.devices.device(id: "existing")?.token == nil)
            #expect(try await store.devices.list(limit: 10_000).count == 5_001)
            #expect(try await store.devices.list(limit: 2, offset: 1).map(\.deviceId) == ["d1", "d10"])

            // A bulk import leaves the planner the tables' real sizes (it plans the worker's
            // subscription reads from them).
            let sizes = try await database.admin.query(
                "SELECT relname::text, reltuples::int8 FROM pg_class WHERE relname IN ('devices', 'device_users') ORDER BY relname")
            #expect(
                try sizes.map { [try $0.decode(String.self, at: 0), String(try $0.decode(Int.self, at: 1))] } == [
                    ["device_users", "5002"], ["devices", "5001"],
                ])
        }
    }

    @Test func deleteRemovesTheDeviceItsUsersAndItsLog() async throws {
        try await TestStore.with { store, database in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            try await JournalSeed.record(store, deviceId: "d1", userId: "u1", messageKeys: ["m1"])
            #expect(try await store.notificationLog.count(deviceId: "d1", after: 0) == 1)

            #expect(try await store.devices.delete(deviceId: "d1"))
            #expect(try await store.devices.device(id: "d1") == nil)
            #expect(try await store.devices.delete(deviceId: "d1") == false)
            let leftovers = try await database.admin.query("SELECT (SELECT count(*) FROM device_users) + (SELECT count(*) FROM journal)")
            #expect(try leftovers.first?.decode(Int.self, at: 0) == 0)
            #expect(try await store.devices.setBadge(3, deviceId: "d1") == false)
        }
    }
}
