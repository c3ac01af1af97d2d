import Crypto
import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Effectively-once: repeats are delivered once.
@Suite("Duplicates", .timeLimit(.minutes(2)))
struct DuplicateTests {
    @Test func aMessagePublishedTwiceWithAvoidDublicationIsDeliveredOnce() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1"), TestEvents.device("d2", user: "u1", platform: .android)])
            let body = TestEvents.xml(users: ["u1"], sequence: 1)
            let sender = RecordingSender()
            try await fixture.withWorker(sender: sender) { worker in
                try await fixture.publish(body, headers: ["AvoidDublication": true])
                try await waitUntil("the first copy", timeout: .seconds(20)) { worker.statistics.acked == 1 }
                try await fixture.publish(body, headers: ["AvoidDublication": true])
                try await waitUntil("the second copy", timeout: .seconds(20)) { worker.statistics.acked == 2 }
                #expect(worker.statistics.duplicatesDropped == 1)
            }
            #expect(sender.count == 2, "one delivery per device, once")
            #expect(try await fixture.depth(fixture.topology.queue) == 0)

            // The support lookup says so (the message key is the body's SHA-256).
            let report = try await fixture.store.lookup.message(key: SHA256.hexDigest(Array(body)))
            #expect(report.summary == "sent")
            #expect(report.repeatsDropped == 1)
            #expect(report.copies.first?.planned == 2)
            #expect(report.deliveries.count == 2)
        }
    }

    /// Two copies in one chunk: the second is dropped at the claim, and noted too.
    @Test func repeatsInOneChunkAreDroppedAndNotedForSupport() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1")])
            let body = TestEvents.xml(users: ["u1"], sequence: 3)
            for _ in 0..<3 { try await fixture.publish(body, messageID: "transfer-77", headers: ["AvoidDublication": true]) }
            let sender = RecordingSender()
            try await fixture.withWorker(sender: sender) { worker in
                try await waitUntil("three copies", timeout: .seconds(20)) { worker.statistics.acked == 3 }
                #expect(worker.statistics.duplicatesDropped == 2)
            }
            #expect(sender.count == 1)
            let report = try await fixture.store.lookup.message(key: "transfer-77")
            #expect(report.repeatsDropped == 2)
            #expect(report.deliveries.map(\.stateName) == ["sent"])
        }
    }

    /// Without the header the journal still makes a repeat (same body, so same delivery keys)
    /// skip, even when both copies are in the worker at once.
    @Test func aRepeatWithoutTheHeaderIsSkippedByTheJournal() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1")])
            let body = TestEvents.xml(users: ["u1"], sequence: 2)
            try await fixture.publish(body)
            try await fixture.publish(body)
            try await fixture.publish(body, messageID: "explicit-id")
            try await fixture.publish(body, messageID: "explicit-id")
            let sender = RecordingSender()
            try await fixture.withWorker(sender: sender) { worker in
                try await waitUntil("four messages", timeout: .seconds(20)) { worker.statistics.acked == 4 }
                #expect(worker.statistics.skipped == 2)
            }
            #expect(sender.count == 2, "one for the body key, one for the message-id key")
        }
    }
}
