import HeraldTesting
import Testing

@testable import HeraldStore

@Suite("SettingsRepository")
struct SettingsRepositoryTests {
    @Test func defaultsThenPartialUpdates() async throws {
        try await TestStore.with { store, _ in
            let defaults = try await store.settings.settings(forUser: "u1")
            #expect(defaults == UserSettings(userId: "u1", pushesEnabled: true, mutedTags: [], updatedAt: nil))

            var settings = try await store.settings.update(userId: "u1", mutedTags: ["Promo", "news"])
            #expect(settings.pushesEnabled && settings.mutedTags == ["promo", "news"])
            #expect(settings.updatedAt != nil)

            settings = try await store.settings.update(userId: "u1", pushesEnabled: false)
            #expect(!settings.pushesEnabled && settings.mutedTags == ["promo", "news"])
            #expect(try await store.settings.settings(forUser: "u1") == settings)

            settings = try await store.settings.update(userId: "u1", mutedTags: [])
            #expect(!settings.pushesEnabled && settings.mutedTags.isEmpty)
        }
    }
}
