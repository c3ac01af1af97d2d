import ArgumentParser
import Foundation
import HeraldAMQP
import HeraldCore
import HeraldWorker

/// `herald dlq list|replay|purge`: look at, send back, or remove the messages Herald refused.
struct DeadLetterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq", abstract: "Inspect, replay or purge the dead-letter queue.", subcommands: [List.self, Replay.self, Purge.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show dead letters (id, error, reason, event, age) without removing them; their order and count are kept."
        )

        @Option(help: "Most dead letters to show.")
        var limit: Int = 50

        @OptionGroup var output: OutputOptions
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let (settings, logger) = try global.settings(connection, logger: "herald.dlq")
            let topology = try RuntimeSettings.topology(settings)
            let entries: [DeadLetterEntry]
            do {
                entries = try await RuntimeSettings.withBroker(settings, logger: logger, name: "herald dlq") { amqp in
                    try await DeadLetterQueue(connection: amqp, topology: topology, store: nil).list(limit: limit)
                }
            } catch {
                Console.error("herald dlq list: \(error)")
                throw ExitCode.failure
            }
            if output.json {
                Console.out(Self.json(entries, queue: topology.deadLetterQueue, limit: limit).serializedString())
                return
            }
            Console.out("ID\tERROR\tEVENT\tAGE\tREASON")
            let now = Date()
            for entry in entries {
                let age = entry.failedAt.map { Console.duration(.seconds(max(0, Int(now.timeIntervalSince($0))))) } ?? "-"
                Console.out("\(entry.id ?? entry.messageId ?? "-")\t\(entry.code ?? "-")\t\(entry.eventId ?? "-")\t\(age)\t\(entry.reason ?? "-")")
            }
            Console.out("\(entries.count) dead letter(s) in \(topology.deadLetterQueue)\(entries.count == limit ? " (limit reached; --limit shows more)" : "")")
        }

        /// `{"queue":…,"dead_letters":[…],"limit_reached":…}`, the table's fields by name.
        static func json(_ entries: [DeadLetterEntry], queue: String, limit: Int) -> JSONValue {
            func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
            let letters = entries.map { entry in
                JSONValue.object([
                    "id": text(entry.id), "message_id": text(entry.messageId), "error": text(entry.code), "reason": text(entry.reason),
                    "event_id": text(entry.eventId), "failed_at": text(entry.failedAt.map { $0.formatted(.iso8601) }),
                    "content_type": text(entry.contentType), "body_bytes": .int(entry.bodySize),
                ])
            }
            return .object(["queue": .string(queue), "dead_letters": .array(letters), "limit_reached": .bool(entries.count == limit)])
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish dead letters back to the main exchange (after a fix), then remove them from the dead-letter queue.",
            discussion: """
                Choose them with --id, with --all, or with filters (--reason, --event, --since, \
                --until; together they must all match). They are replayed in batches of \
                \(Self.batch), oldest first, with a progress line on standard error after each.
                """
        )

        /// Dead letters replayed per pass over the queue.
        static let batch = 200

        /// Waits (up to 10 s) until the `count` dead letters the listing held are ready again:
        /// the listing returns them with a `basic.nack` the broker handles after it returns, and
        /// a replay counts only the ready messages.
        static func waitUntilReady(_ count: Int, in queue: String, amqp: AMQPConnection) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let ready = try await amqp.queueState(queue).messageCount
                if Int(ready) >= count { return }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        @Option(name: .customLong("id"), help: "A dead-letter id (from herald dlq list); repeat for several.")
        var ids: [String] = []

        @Flag(help: "Replay every dead letter.")
        var all = false

        @Option(help: "Only dead letters whose error code is this (e.g. unknown_event) or whose reason contains it (any case).")
        var reason: String?

        @Option(help: "Only dead letters of this event id.")
        var event: String?

        @Option(help: "Only dead letters that failed since then: a duration back from now (90m, 24h, 7d) or an RFC 3339 date-time.")
        var since: String?

        @Option(help: "Only dead letters that failed before then: a duration back from now or an RFC 3339 date-time.")
        var until: String?

        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            let filtered = reason != nil || event != nil || since != nil || until != nil
            guard [all, !ids.isEmpty, filtered].filter({ $0 }).count == 1 else {
                throw ValidationError("give --id ID (one or more), --all, or filters (--reason, --event, --since, --until)")
            }
            for (flag, value) in [("--since", since), ("--until", until)] {
                if let value, DeliveriesCommand.date(value, now: Date()) == nil {
                    throw ValidationError("\(flag) must be a duration (90m, 24h, 7d) or an RFC 3339 date-time")
                }
            }
        }

        func run() async throws {
            let (settings, logger) = try global.settings(connection, logger: "herald.dlq")
            let topology = try RuntimeSettings.topology(settings)
            let filter = DeadLetterFilter(
                reason: reason, eventId: event, since: since.flatMap { DeliveriesCommand.date($0, now: Date()) },
                until: until.flatMap { DeliveriesCommand.date($0, now: Date()) })
            var replayed = 0
            var notFound: [String] = []
            do {
                try await RuntimeSettings.withStore(settings, logger: logger) { store in
                    try await RuntimeSettings.withBroker(settings, logger: logger, name: "herald dlq") { amqp in
                        let queue = DeadLetterQueue(connection: amqp, topology: topology, store: store)
                        var chosen = ids
                        var unnamed = 0
                        if ids.isEmpty {
                            let listed = try await queue.list(limit: Int.max)
                            let matching = listed.filter(filter.matches)
                            chosen = matching.compactMap { $0.id ?? $0.messageId }
                            unnamed = matching.count - chosen.count
                            Console.error("herald dlq replay: \(matching.count) dead letter(s) to replay")
                            try await Self.waitUntilReady(listed.count, in: topology.deadLetterQueue, amqp: amqp)
                        }
                        for start in stride(from: 0, to: chosen.count, by: Self.batch) {
                            let result = try await queue.replay(ids: Set(chosen[start..<min(start + Self.batch, chosen.count)]))
                            replayed += result.replayed.count
                            notFound += result.notFound
                            Console.error("replayed \(replayed) of \(chosen.count)")
                        }
                        // Broker dead letters without any id can only be taken with the rest.
                        if all, unnamed > 0 {
                            replayed += try await queue.replay(ids: nil).replayed.count
                            Console.error("replayed \(replayed), with the dead letters that carry no id")
                        } else if unnamed > 0 {
                            Console.error("herald dlq replay: \(unnamed) matching dead letter(s) carry no id and were left; --all takes them")
                        }
                    }
                }
            } catch {
                Console.error("herald dlq replay: \(error) (after \(replayed) replayed)")
                throw ExitCode.failure
            }
            Console.out("Replayed \(replayed) dead letter(s) to exchange '\(topology.exchange)' with routing key '\(topology.routingKey)'.")
            if !notFound.isEmpty {
                Console.error("herald dlq replay: not in \(topology.deadLetterQueue): \(notFound.joined(separator: ", "))")
                throw ExitCode.failure
            }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete every dead letter.")

        @Flag(help: "Confirm: the messages are gone for good.")
        var yes = false

        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard yes else { throw ValidationError("purging deletes the dead letters for good; add --yes") }
        }

        func run() async throws {
            let (settings, logger) = try global.settings(connection, logger: "herald.dlq")
            let topology = try RuntimeSettings.topology(settings)
            do {
                let count = try await RuntimeSettings.withBroker(settings, logger: logger, name: "herald dlq") { amqp in
                    try await DeadLetterQueue(connection: amqp, topology: topology, store: nil).purge()
                }
                Console.out("Purged \(count) dead letter(s) from \(topology.deadLetterQueue).")
            } catch {
                Console.error("herald dlq purge: \(error)")
                throw ExitCode.failure
            }
        }
    }
}
