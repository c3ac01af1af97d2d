import HeraldCore
import HeraldStore
import HeraldTesting
import Testing

@Suite("TemplateRepository")
struct TemplateRepositoryTests {
    @Test func importsTheRepositoryTemplatesAndReadsThemBackUnchanged() async throws {
        try await TestStore.with { store, _ in
            let catalog = try StoreFixture.repositoryTemplates()
            #expect(!catalog.templates.isEmpty)
            let summary = try await store.templates.replaceAll(with: catalog)
            #expect(summary.templates == catalog.templates.count)
            #expect(summary.events == Set(catalog.templates.map(\.eventId)).count)

            let stored = try await store.templates.all()
            func key(_ t: Template) -> String { "\(t.eventId)|\(t.culture)|\(t.platform)" }
            #expect(stored.sorted { key($0) < key($1) } == catalog.templates.sorted { key($0) < key($1) })

            let reloaded = try await store.templates.catalog(defaultCulture: "ru-RU")
            #expect(reloaded.problems.isEmpty)
            let metadata = try #require(reloaded.metadata(forEventId: "TransferIssued"))
            #expect(metadata == catalog.metadata(forEventId: "TransferIssued"))
        }
    }

    @Test func replaceRemovesEventsNoLongerPresent() async throws {
        try await TestStore.with { store, _ in
            let first = try TemplateCatalog(
                templates: [
                    Template(
                        eventId: "A", culture: "ru-RU", platform: .ios, title: "T", body: "{0}",
                        metadata: EventMetadata(eventId: "A", tag: "x", timeToLiveSeconds: 60)),
                    Template(
                        eventId: "B", culture: "ru-RU", platform: .android, title: "T", body: "b",
                        metadata: EventMetadata(eventId: "B", isPrivate: true, isSilent: true)),
                ], defaultCulture: "ru-RU")
            try await store.templates.replaceAll(with: first)
            #expect(Set(try await store.templates.all().map(\.eventId)) == ["A", "B"])
            let b = try #require(try await store.templates.all().first { $0.eventId == "B" })
            #expect(b.metadata.isPrivate && b.metadata.isSilent && b.metadata.timeToLiveSeconds == nil)

            let second = try TemplateCatalog(
                templates: [
                    Template(eventId: "B", culture: "en-US", platform: .ios, title: "T2", body: "b2", metadata: EventMetadata(eventId: "B", priority: .high))
                ], defaultCulture: "ru-RU")
            try await store.templates.replaceAll(with: second)
            #expect(try await store.templates.all() == second.templates)
        }
    }

    @Test func refusesACatalogWithProblems() async throws {
        try await TestStore.with { store, _ in
            let broken = try TemplateCatalog(
                templates: [
                    Template(eventId: "A", culture: "ru-RU", platform: .ios, title: "T", body: "{name}", metadata: EventMetadata(eventId: "A"))
                ], defaultCulture: "ru-RU")
            #expect(!broken.problems.isEmpty)
            do {
                try await store.templates.replaceAll(with: broken)
                Issue.record("a catalog with problems must be refused")
            } catch let error as StoreError {
                #expect(error.code == .invalidData)
            }
            #expect(try await store.templates.all().isEmpty)
        }
    }
}
