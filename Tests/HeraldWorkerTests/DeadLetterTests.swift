import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Bad input never disappears: poison messages end in the dead-letter queue with their reasons,
/// the messages around them are delivered, and a replay after the fix delivers them.
@Suite("Dead letters", .timeLimit(.minutes(2)))
struct DeadLetterTests {
    @Test func poisonMessagesAreDeadLetteredWithTheirReasonsAndReplayedAfterTheFix() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1"), TestEvents.device("d2", user: "u2", platform: .android)])
            let sender = RecordingSender()
            try await fixture.withWorker(sender: sender) { worker in
                try await fixture.publish(TestEvents.xml(users: ["u1"], parameters: ["1"], sequence: 1))
                try await fixture.publish(Data("<PushNotification><EventId>TransferIssued</EventId>".utf8))
                try await fixture.publish(TestEvents.xml(users: ["u2"], parameters: ["2"], sequence: 2))
                try await fixture.publish(TestEvents.xml(eventId: "NoSuchEvent", users: ["u1"], sequence: 3))
                try await fixture.publish(TestEvents.xml(users: ["u1"], parameters: ["3"], sequence: 4))
                try await fixture.publish(TestEvents.xml(eventId: "EVENT 006", users: ["u2"], parameters: ["only", "two"], sequence: 5))
                try await fixture.publish(TestEvents.xml(users: ["u2"], parameters: ["4"], sequence: 6))
                try await waitUntil("seven messages settled", timeout: .seconds(20)) {
                    guard worker.statistics.acked == 7 else { return false }
                    return (try? await fixture.depth(fixture.topology.deadLetterQueue)) == 3
                }
                #expect(worker.statistics.deadLettered == 3)
                #expect(sender.count == 4, "the valid messages around the poison are delivered")

                let queue = DeadLetterQueue(connection: fixture.amqp, topology: fixture.topology, store: fixture.store)
                let letters = try await queue.list(limit: 10)
                #expect(letters.map(\.code) == ["undecodable", "unknown_event", "parameter_count"])
                #expect(letters[0].reason?.contains("malformedDocument") == true)
                #expect(letters[1].reason?.contains("NoSuchEvent") == true)
                #expect(letters[2].reason?.contains("missingParameter") == true)
                #expect(letters.allSatisfy { $0.id != nil && $0.failedAt != nil })
                // Listing returns them with nack(requeue): they are back once the broker took the nacks.
                try await waitUntil("listing keeps them", timeout: .seconds(5)) { (try? await fixture.depth(fixture.topology.deadLetterQueue)) == 3 }
                let recorded = try await fixture.store.deadLetters.list()
                #expect(Set(recorded.map(\.id)) == Set(letters.compactMap(\.id)))

                // Fix: a template for NoSuchEvent, and EVENT 006 texts that use two parameters.
                let metadata = EventMetadata(eventId: "NoSuchEvent")
                let fixed = try WorkerFixture.templates(
                    extra: [
                        Template(eventId: "NoSuchEvent", culture: "ru-RU", platform: .ios, title: "T", body: "Новое событие {0}", metadata: metadata),
                        Template(eventId: "NoSuchEvent", culture: "ru-RU", platform: .android, title: "T", body: "Новое событие {0}", metadata: metadata),
                    ]
                        + TestEvents.seedTemplates().map {
                            var t = $0; t.body = "Перевод {0} {1}"; return t
                        })
                try await fixture.store.templates.replaceAll(with: fixed)
                try await waitUntil("the worker reloads the templates", timeout: .seconds(10)) {
                    fixture.store.templateCache.current?.metadata(forEventId: "NoSuchEvent") != nil
                }
                let result = try await queue.replay(ids: [letters[1].id!, letters[2].id!])
                #expect(result.replayed.count == 2 && result.notFound.isEmpty)
                try await waitUntil("the replayed messages are delivered", timeout: .seconds(20)) { sender.count == 6 }
                let remaining = try await DeadLetterQueue(connection: fixture.amqp, topology: fixture.topology, store: nil).list(limit: 10)
                #expect(remaining.map(\.code) == ["undecodable"], "the bad XML stays")
                #expect(try await fixture.store.deadLetters.list().map(\.id) == [letters[0].id!])
            }
            let replayed = sender.sent.suffix(2)
            #expect(Set(replayed.map(\.eventId)) == ["NoSuchEvent", "EVENT 006"])
        }
    }

    @Test func anEventWithoutUserIdThatIsNotNewsIsRefused() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1")])
            try await fixture.withWorker(sender: RecordingSender()) { worker in
                try await fixture.publish(TestEvents.xml(users: [], sequence: 1))
                try await waitUntil("dead-lettered", timeout: .seconds(20)) { worker.statistics.deadLettered == 1 }
            }
            let letters = try await DeadLetterQueue(connection: fixture.amqp, topology: fixture.topology, store: nil).list(limit: 5)
            #expect(letters.map(\.code) == ["no_addressee"])
        }
    }
}
