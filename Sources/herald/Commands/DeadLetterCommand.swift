import ArgumentParser
import Foundation
import HeraldAMQP
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
            Console.out("ID\tERROR\tEVENT\tAGE\tREASON")
            let now = Date()
            for entry in entries {
                let age = entry.failedAt.map { Console.duration(.seconds(max(0, Int(now.timeIntervalSince($0))))) } ?? "-"
                Console.out("\(entry.id ?? entry.messageId ?? "-")\t\(entry.code ?? "-")\t\(entry.eventId ?? "-")\t\(age)\t\(entry.reason ?? "-")")
            }
            Console.out("\(entries.count) dead letter(s) in \(topology.deadLetterQueue)\(entries.count == limit ? " (limit reached; --limit shows more)" : "")")
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish dead letters back to the main exchange (after a fix), then remove them from the dead-letter queue."
        )

        @Option(name: .customLong("id"), help: "A dead-letter id (from herald dlq list); repeat for several.")
        var ids: [String] = []

        @Flag(help: "Replay every dead letter.")
        var all = false

        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard all != !ids.isEmpty else { throw ValidationError("give --id ID (one or more) or --all") }
        }

        func run() async throws {
            let (settings, logger) = try global.settings(connection, logger: "herald.dlq")
            let topology = try RuntimeSettings.topology(settings)
            let result: DeadLetterQueue.ReplayResult
            do {
                result = try await RuntimeSettings.withStore(settings, logger: logger) { store in
                    try await RuntimeSettings.withBroker(settings, logger: logger, name: "herald dlq") { amqp in
                        try await DeadLetterQueue(connection: amqp, topology: topology, store: store).replay(ids: all ? nil : Set(ids))
                    }
                }
            } catch {
                Console.error("herald dlq replay: \(error)")
                throw ExitCode.failure
            }
            Console.out("Replayed \(result.replayed.count) dead letter(s) to exchange '\(topology.exchange)' with routing key '\(topology.routingKey)'.")
            if !result.notFound.isEmpty {
                Console.error("herald dlq replay: not in \(topology.deadLetterQueue): \(result.notFound.joined(separator: ", "))")
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
