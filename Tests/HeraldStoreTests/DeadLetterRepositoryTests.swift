import Foundation
import HeraldStore
import HeraldTesting
import Testing

@Suite("DeadLetterRepository")
struct DeadLetterRepositoryTests {
    @Test func recordListAndMarkReplayed() async throws {
        try await TestStore.with { store, _ in
            let older = DeadLetter(
                messageKey: "m1", queue: "w1.pushnotification", errorCode: "malformedXML", reason: "unclosed tag at line 3",
                createdAt: Date(timeIntervalSince1970: 1_700_000_000)
            )
            let newer = DeadLetter(
                messageKey: nil, queue: "w1.pushnotification", errorCode: "noTemplate", reason: "no template", eventId: "Unknown",
                createdAt: Date(timeIntervalSince1970: 1_700_000_100)
            )
            try await store.deadLetters.record(older)
            try await store.deadLetters.record(newer)
            try await store.deadLetters.record(newer)
            #expect(try await store.deadLetters.list().map(\.id) == [newer.id, older.id])
            #expect(try await store.deadLetters.list().last == older)

            #expect(try await store.deadLetters.markReplayed(id: older.id))
            #expect(try await store.deadLetters.markReplayed(id: older.id) == false)
            #expect(try await store.deadLetters.markReplayed(id: "unknown") == false)
            #expect(try await store.deadLetters.list().map(\.id) == [newer.id])
            let all = try await store.deadLetters.list(includeReplayed: true)
            #expect(all.count == 2)
            #expect(all.last?.replayedAt != nil)
        }
    }
}
