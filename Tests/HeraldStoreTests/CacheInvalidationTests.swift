import Foundation
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

/// The caches against the real database: invalidation through NOTIFY, and after the listener's
/// connection is killed.
@Suite("Cache invalidation")
struct CacheInvalidationTests {
    static func started(_ store: Store) async throws {
        store.start()
        try await waitUntil("the change listener", timeout: .seconds(10)) { store.changeListener.isListening }
    }

    @Test func subscriptionChangesInvalidateTheCache() async throws {
        try await TestStore.with { store, _ in
            // Set up before listening, so that no late notification of the setup interferes.
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1"))
            try await store.devices.subscribe(StoreFixture.registration("d9", user: "u2"))
            try await Self.started(store)
            let cache = store.subscriptionCache
            #expect(try await cache.subscriptions(forUsers: ["u1", "u2"])["u1"]?.count == 1)
            #expect(cache.statistics.users == 2)
            _ = try await cache.subscriptions(forUsers: ["u1"])
            #expect(cache.statistics.hits == 1)

            // A second device for u1.
            let start = ContinuousClock.now
            try await store.devices.subscribe(StoreFixture.registration("d2", user: "u1"))
            try await waitUntil("u1's new device", timeout: .seconds(5)) {
                try await cache.subscriptions(forUsers: ["u1"])["u1"]?.count == 2
            }
            print("subscription change → cache: \(ContinuousClock.now - start)")
            // u2 was not touched: still cached.
            let misses = cache.statistics.misses
            _ = try await cache.subscriptions(forUsers: ["u2"])
            #expect(cache.statistics.misses == misses)

            // Settings, a dead token, a token refresh.
            try await store.settings.update(userId: "u1", pushesEnabled: false)
            try await waitUntil("u1's settings", timeout: .seconds(5)) {
                try await cache.subscriptions(forUsers: ["u1"])["u1"]?.allSatisfy { !$0.isEnabled } == true
            }
            try await store.devices.markTokenDead(deviceId: "d2", token: "token-d2", reason: "Unregistered")
            try await waitUntil("u1's dead token", timeout: .seconds(5)) {
                try await cache.subscriptions(forUsers: ["u1"])["u1"]?.map(\.deviceId) == ["d1"]
            }
            try await store.devices.setToken("T-new", deviceId: "d1")
            try await waitUntil("u1's new token", timeout: .seconds(5)) {
                try await cache.subscriptions(forUsers: ["u1"])["u1"]?.map(\.token) == ["T-new"]
            }
            // A bulk import flushes everyone.
            try await store.devices.importDevices([StoreFixture.registration("d3", user: "u3")])
            try await waitUntil("the flush after an import", timeout: .seconds(5)) {
                cache.statistics.users == 0
            }
        }
    }

    @Test func templateChangesReloadTheCatalog() async throws {
        try await TestStore.with { store, _ in
            let metadata = EventMetadata(eventId: "A")
            try await store.templates.replaceAll(
                with: try TemplateCatalog(
                    templates: [
                        Template(eventId: "A", culture: "ru-RU", platform: .ios, title: "t", body: "first", metadata: metadata)
                    ], defaultCulture: "ru-RU"))
            try await Self.started(store)
            #expect(try await store.templateCache.catalog().template(eventId: "A", culture: "ru-RU", platform: .ios).body == "first")

            try await store.templates.replaceAll(
                with: try TemplateCatalog(
                    templates: [
                        Template(eventId: "A", culture: "ru-RU", platform: .ios, title: "t", body: "second", metadata: metadata)
                    ], defaultCulture: "ru-RU"))
            try await waitUntil("the reloaded template", timeout: .seconds(5)) {
                (try? store.templateCache.current?.template(eventId: "A", culture: "ru-RU", platform: .ios).body) == "second"
            }
        }
    }

    @Test func aKilledListenerReconnectsAndFlushes() async throws {
        try await TestStore.with { store, database in
            try await store.devices.subscribe(StoreFixture.registration("d1", user: "u1", culture: "ru-RU"))
            try await Self.started(store)
            let cache = store.subscriptionCache
            #expect(try await cache.subscriptions(forUsers: ["u1"])["u1"]?.first?.culture == "ru-RU")
            #expect(cache.statistics.users == 1)
            _ = try await store.templateCache.catalog()
            let templatesLoadedAt = try #require(store.templateCache.loadedAt)

            // A change whose notification is lost (as while a listener is disconnected).
            try await database.admin.withTransaction { transaction in
                try await transaction.execute("SELECT set_config('herald.defer_notify', 'on', true)")
                try await transaction.execute("UPDATE devices SET culture = 'en-US'")
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await cache.subscriptions(forUsers: ["u1"])["u1"]?.first?.culture == "ru-RU", "stale, as expected")

            let listeners = try await database.backendPIDs(applicationName: "herald-tests listener")
            #expect(listeners.count == 2)
            for pid in listeners { try await database.terminate(pid) }
            try await waitUntil("the listeners to reconnect", timeout: .seconds(10)) {
                let now = try await database.backendPIDs(applicationName: "herald-tests listener")
                return now.count == 2 && Set(now).isDisjoint(with: listeners) && store.changeListener.isListening
            }
            #expect(try await cache.subscriptions(forUsers: ["u1"])["u1"]?.first?.culture == "en-US")
            try await waitUntil("templates reloaded after the reconnect", timeout: .seconds(5)) {
                (store.templateCache.loadedAt ?? .distantPast) > templatesLoadedAt
            }

            // Notifications work again.
            try await store.devices.setToken("T2", deviceId: "d1")
            try await waitUntil("the change after the reconnect", timeout: .seconds(5)) {
                try await cache.subscriptions(forUsers: ["u1"])["u1"]?.first?.token == "T2"
            }

            await store.stop()
            #expect(!cache.statistics.isLive)
            #expect(!store.changeListener.isListening)
            try await waitUntil("the listeners to close", timeout: .seconds(5)) {
                try await database.backendPIDs(applicationName: "herald-tests listener").isEmpty
            }
        }
    }
}
