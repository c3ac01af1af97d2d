import ArgumentParser
import Foundation
import HeraldAMQP
import HeraldCore
import HeraldWorker

/// `herald publish FILE...`: publishes event files the way a producer should: content type by
/// content (`application/xml` or `application/json`), persistent, to the configured exchange
/// with the routing key `w1.pushnotification`, with publisher confirms. Each file is decoded
/// first (as the worker will), unless `--raw` (to send a bad message on purpose, e.g. to try
/// the dead-letter queue).
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish XML or JSON event files to RabbitMQ.",
        discussion: "See docs/formats.md for the message format, the headers and the message key."
    )

    @Argument(help: "Event files (seed 000 XML or JSON).")
    var files: [String]

    @Option(help: "Routing key (amqp.routing_key; default the queue name, w1.pushnotification).")
    var routingKey: String?

    @Option(help: "Exchange (amqp.exchange; default herald).")
    var exchange: String?

    @Option(help: "AMQP message-id for every message (the message key: a repeat with the same id is delivered once).")
    var messageID: String?

    @Flag(help: "Give every message a new random message-id.")
    var generateMessageID = false

    @Flag(help: "Set the header AvoidDublication: true (repeats of the message are dropped).")
    var avoidDuplication = false

    @Flag(help: "Publish the files as they are, without decoding them first.")
    var raw = false

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if messageID != nil && generateMessageID { throw ValidationError("--message-id and --generate-message-id exclude each other") }
    }

    func run() async throws {
        let (settings, logger) = try global.settings(connection, logger: "herald.publish") {
            $0.set(.amqpRoutingKey, flag: routingKey)
            $0.set(.amqpExchange, flag: exchange)
        }
        var messages: [AMQPOutgoingMessage] = []
        var failures = 0
        let topology = try RuntimeSettings.topology(settings)
        for path in files {
            guard let data = FileManager.default.contents(atPath: path) else {
                Console.error("error: \(path): cannot read the file")
                failures += 1
                continue
            }
            let format: EventFormat?
            if raw {
                format = try? EventDecoder.detectFormat(Array(data), contentType: nil)
            } else {
                do {
                    format = try EventDecoder().decode(data).format
                } catch {
                    Console.error("error: \(path): \(error) (use --raw to publish it anyway)")
                    failures += 1
                    continue
                }
            }
            var headers: AMQPTable = ["timestamp_in_ms": .int(Int64((Date().timeIntervalSince1970 * 1000).rounded()))]
            if avoidDuplication { headers["AvoidDublication"] = .bool(true) }
            let properties = AMQPProperties(
                contentType: format.map { $0 == .xml ? "application/xml" : "application/json" } ?? "application/octet-stream",
                headers: headers, deliveryMode: .persistent,
                messageID: messageID ?? (generateMessageID ? UUID().uuidString.lowercased() : nil), timestamp: Date(), appID: "herald publish"
            )
            messages.append(
                AMQPOutgoingMessage(exchange: topology.exchange, routingKey: topology.routingKey, body: data, properties: properties, mandatory: true))
        }
        if !messages.isEmpty {
            do {
                try await RuntimeSettings.withBroker(settings, logger: logger, name: "herald publish") { connection in
                    // The queue must exist before anything is published to it, or the broker drops it.
                    try await connection.declare(topology)
                    try await connection.publishBatch(messages)
                }
            } catch {
                Console.error("herald publish: \(error)")
                throw ExitCode.failure
            }
            Console.out(
                "Published \(messages.count) message(s) to exchange '\(topology.exchange)' with routing key '\(topology.routingKey)' (confirmed by the broker)."
            )
        }
        if failures > 0 {
            Console.error("herald publish: \(failures) file(s) not published")
            throw ExitCode.failure
        }
    }
}
