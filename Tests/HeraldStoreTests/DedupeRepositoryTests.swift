import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

@Suite("DedupeRepository")
struct DedupeRepositoryTests {
    @Test func firstSeenOncePerKey() async throws {
        try await StoreFixture.with { store, _ async throws in
            #expect(try await store.dedupe.firstSeen([]) == [])
            #expect(try await store.dedupe.firstSeen(["a", "b", "a"]) == [true, true, false])
            #expect(try await store.dedupe.firstSeen(["b", "c"]) == [false, true])
        }
    }

    @Test func concurrentCallsSeeANewKeyFirstExactlyOnce() async throws {
        try await StoreFixture.with { store, _ in
            let keys = (0..<200).map { "k\($0)" }
            let answers = try await withThrowingTaskGroup(of: [Bool].self) { group in
                for _ in 0..<4 { group.addTask { try await store.dedupe.firstSeen(keys.shuffled()) } }
                var all: [[Bool]] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.flatMap { $0 }.filter { $0 }.count == keys.count)
        }
    }

    @Test func expiredKeysAreNewAgainAndDeleted() async throws {
        try await StoreFixture.with { store, database in
            #expect(try await store.dedupe.firstSeen(["old", "young"]) == [true, true])
            try await database.admin.execute("UPDATE dedupe_keys SET expires_at = now() - interval '1 second' WHERE key = 'old'")
            #expect(try await store.dedupe.firstSeen(["old"]) == [true])
            try await database.admin.execute("UPDATE dedupe_keys SET expires_at = now() - interval '1 second' WHERE key = 'old'")
            #expect(try await store.dedupe.expire() == 1)
            #expect(try await store.dedupe.firstSeen(["young"]) == [false])
        }
    }
}
