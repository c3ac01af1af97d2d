import Foundation
import HeraldPostgres
import HeraldTesting
import Testing

@testable import HeraldStore

@Suite("ClaimQueue")
struct ClaimQueueTests {
    /// Claims sent back to back, before any answer is read, run in submission order: a device
    /// in all of them gets its positions in that order.
    @Test func claimsSentBackToBackNumberInSubmissionOrder() async throws {
        try await TestStore.with { store, _ in
            let d1 = try await DeliveryJournalTests.devices(store, ["d1"])[0]
            let queue = store.journal.makeClaimQueue()
            let claims = (0..<5).map { n in queue.submit(DeliveryJournalTests.batch(["m\(n)"], [(0, d1), (0, d1)])) }
            var positions: [Int64?] = []
            for claim in claims {
                let answer = try await claim.answer()
                #expect(answer.messageIds[0] != nil)
                positions += answer.positions
                queue.pass(claim)
            }
            #expect(positions == (1...10).map { Int64($0) })
            await queue.close()
        }
    }

    /// A claim that found a known message holds the line until it is passed (its resumed
    /// deliveries reserve positions in a second statement first): the claim sent behind it is
    /// skipped meanwhile and numbers after that second step.
    @Test func aClaimWithAKnownMessageHoldsTheClaimsBehindIt() async throws {
        try await TestStore.with { store, _ in
            let d1 = try await DeliveryJournalTests.devices(store, ["d1"])[0]
            _ = try await store.journal.claim(DeliveryJournalTests.batch(["known"], [(0, d1)]))  // position 1
            let queue = store.journal.makeClaimQueue()
            var redelivered = DeliveryJournalTests.batch(["known"], [(0, d1)])
            redelivered.mayHoldKnown = true
            let first = queue.submit(redelivered)
            let second = queue.submit(DeliveryJournalTests.batch(["new"], [(0, d1)]))
            #expect(try await first.answer().messageIds == [nil])
            // Time enough for a claim that would not wait to run.
            try await Task.sleep(for: .milliseconds(200))
            // The second step of the first claim, before the claim behind it may run.
            #expect(try await store.journal.reservePositions([d1]) == [2])
            queue.pass(first)
            let answer = try await second.answer()
            #expect(answer.messageIds[0] != nil)
            #expect(answer.positions == [3])
            queue.pass(second)
            await queue.close()
        }
    }

    /// A plain claim that meets a key the journal knows (a producer's repeat) is sent again
    /// skipping it, as ``DeliveryJournal/claim(_:)`` does; the claim behind it waits for that.
    @Test func aRepeatedKeyInAPlainClaimIsSkippedAndTheLineHeld() async throws {
        try await TestStore.with { store, _ in
            let d1 = try await DeliveryJournalTests.devices(store, ["d1"])[0]
            _ = try await store.journal.claim(DeliveryJournalTests.batch(["m1"], [(0, d1)]))  // position 1
            let queue = store.journal.makeClaimQueue()
            let first = queue.submit(DeliveryJournalTests.batch(["m2", "m1"], [(0, d1), (1, d1)]))
            let second = queue.submit(DeliveryJournalTests.batch(["m3"], [(0, d1)]))
            let answer = try await first.answer()
            #expect(answer.messageIds[0] != nil && answer.messageIds[1] == nil)
            #expect(answer.positions == [2, nil])
            queue.pass(first)
            #expect(try await second.answer().positions == [3])
            queue.pass(second)
            await queue.close()
        }
    }
}
