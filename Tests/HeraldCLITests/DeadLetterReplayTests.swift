import Foundation
import HeraldAMQP
import HeraldStore
import HeraldTesting
import Testing

@testable import HeraldWorker
@testable import herald

/// `herald dlq replay` chooses dead letters by reason, event and time, and says how far it is.
@Suite("dlq replay filters", .timeLimit(.minutes(2)))
struct DeadLetterReplayTests {
    static func entry(code: String, reason: String, event: String?, failedAt: Date?) -> DeadLetterEntry {
        DeadLetterEntry(id: "x", code: code, reason: reason, eventId: event, failedAt: failedAt, messageId: nil, contentType: nil, bodySize: 0)
    }

    @Test func theFilterNeedsEveryConditionSet() {
        let now = Date()
        let unknown = Self.entry(code: "unknown_event", reason: "no event Nope", event: "Nope", failedAt: now.addingTimeInterval(-60))
        let old = Self.entry(code: "undecodable", reason: "not XML or JSON", event: nil, failedAt: now.addingTimeInterval(-86_400 * 2))
        #expect(DeadLetterFilter().matches(unknown) && DeadLetterFilter().matches(old))
        #expect(DeadLetterFilter(reason: "UNKNOWN_EVENT").matches(unknown) && !DeadLetterFilter(reason: "unknown_event").matches(old))
        #expect(DeadLetterFilter(reason: "xml").matches(old), "a piece of the reason, any case")
        #expect(DeadLetterFilter(eventId: "Nope").matches(unknown) && !DeadLetterFilter(eventId: "Nope").matches(old))
        #expect(DeadLetterFilter(since: now.addingTimeInterval(-3600)).matches(unknown))
        #expect(!DeadLetterFilter(since: now.addingTimeInterval(-3600)).matches(old))
        #expect(DeadLetterFilter(until: now.addingTimeInterval(-3600)).matches(old) && !DeadLetterFilter(until: now.addingTimeInterval(-3600)).matches(unknown))
        #expect(!DeadLetterFilter(reason: "unknown_event", eventId: "Other").matches(unknown))
    }

    @Test(.requires(.rabbitMQ)) func replaysOnlyTheChosenDeadLettersWithProgress() async throws {
        try await TestDatabase.with { _, database in
            let store = try Store(configuration: StoreConfiguration(database: database.configuration))
            try await store.migrate()
            await store.close()
            let topology = HeraldTopology(exchange: TestEnvironment.uniqueName("herald.cli.replay.x"), queue: TestEnvironment.uniqueName("herald.cli.replay"))
            let amqp = try await AMQPConnection.connect(try AMQPConfiguration(url: TestEnvironment.amqpURL))
            do {
                _ = try await amqp.declare(topology)
                let letters: [(String, DeadLetterCode, String?, Date)] = [
                    ("a", .unknownEvent, "Nope", Date()), ("b", .undecodable, nil, Date()), ("c", .unknownEvent, "Nope", Date()),
                    ("d", .unknownEvent, "Nope", Date().addingTimeInterval(-3 * 86_400)),
                ]
                for (id, code, event, failedAt) in letters {
                    let properties = DeadLetterHeaders.deadLetterProperties(
                        original: AMQPProperties(), code: code, reason: "\(code.rawValue) \(id)", id: id, queue: topology.queue, eventId: event,
                        failedAt: failedAt)
                    try await amqp.publish(Data(id.utf8), routingKey: topology.deadLetterQueue, properties: properties)
                }
                let environment = [
                    "HERALD_AMQP_URL": TestEnvironment.amqpURL, "HERALD_AMQP_QUEUE": topology.queue, "HERALD_AMQP_EXCHANGE": topology.exchange,
                    "HERALD_DATABASE_URL": database.url, "HERALD_LOG_LEVEL": "error",
                ]
                let refused = try HeraldCLI.run(["dlq", "replay", "--all", "--event", "Nope"], environment: environment)
                #expect(refused.status != 0 && refused.stderr.contains("--all, or filters"), "\(refused.stderr)")

                let replay = try HeraldCLI.run(["dlq", "replay", "--reason", "unknown_event", "--event", "Nope", "--since", "1d"], environment: environment)
                #expect(replay.status == 0, "\(replay.stderr)")
                #expect(replay.stdout.contains("Replayed 2 dead letter(s)"), "\(replay.stdout)")
                #expect(replay.stderr.contains("2 dead letter(s) to replay") && replay.stderr.contains("replayed 2 of 2"), "\(replay.stderr)")
                var main: [String] = []
                while let message = try await amqp.get(queue: topology.queue, autoAck: true) { main.append(String(decoding: message.body, as: UTF8.self)) }
                #expect(main == ["a", "c"])
                let left = try await DeadLetterQueue(connection: amqp, topology: topology, store: nil).list(limit: 10)
                #expect(left.map(\.id) == ["b", "d"], "the others stay, in order")
            } catch {
                await ListJSONTests.cleanUp(amqp, topology)
                throw error
            }
            await ListJSONTests.cleanUp(amqp, topology)
        }
    }
}
