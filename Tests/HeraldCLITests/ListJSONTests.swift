import Foundation
import HeraldAMQP
import HeraldTesting
import HeraldWorker
import Testing

/// `herald --help` lists the commands by task, and every list command prints one JSON document
/// with `--json`.
@Suite("help and --json", .timeLimit(.minutes(2)))
struct ListJSONTests {
    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    @Test func helpIsGroupedByTask() throws {
        let help = try HeraldCLI.run(["--help"], timeout: .seconds(30))
        #expect(help.status == 0)
        let headings = ["SERVICE SUBCOMMANDS:", "SETUP SUBCOMMANDS:", "OPERATIONS SUBCOMMANDS:", "TEST AND BENCHMARK SUBCOMMANDS:"]
        let positions = headings.map { help.stdout.range(of: $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil }, "\(help.stdout)")
        let service = try #require(help.stdout.range(of: "SERVICE SUBCOMMANDS:")), setup = try #require(help.stdout.range(of: "SETUP SUBCOMMANDS:"))
        #expect(help.stdout[service.upperBound..<setup.lowerBound].contains("worker"))
        for command in ["worker", "api", "serve", "drain", "migrate", "send", "dlq", "deliveries", "sandbox", "bench"] {
            #expect(help.stdout.contains("  \(command) "), "\(command) is listed")
        }
    }

    @Test func configKeysAndShowPrintJSON() throws {
        let keys = try Self.object(try HeraldCLI.run(["config", "keys", "--json"], timeout: .seconds(30)).stdout)
        let list = try #require(keys["keys"] as? [[String: Any]])
        let database = try #require(list.first { $0["key"] as? String == "database.url" })
        #expect(database["environment"] as? String == "HERALD_DATABASE_URL" && database["flag"] as? String == "--database-url")
        #expect(database["secret"] as? Bool == true)

        let show = try HeraldCLI.run(
            ["config", "show", "--json"], environment: ["HERALD_CONFIG": "", "HERALD_DATABASE_URL": "postgres://u:secret@h/db", "HERALD_WORKER_THREADS": "7"],
            timeout: .seconds(30))
        #expect(!show.stdout.contains("secret@"), "secrets stay hidden")
        let values = try #require(try Self.object(show.stdout)["values"] as? [[String: Any]])
        let threads = try #require(values.first { $0["key"] as? String == "worker.threads" })
        #expect(threads["value"] as? String == "7" && threads["source"] as? String == "HERALD_WORKER_THREADS")
    }

    @Test func devicesListPrintsJSON() async throws {
        try await TestDatabase.with { _, database in
            let environment = ["HERALD_DATABASE_URL": database.url, "HERALD_LOG_LEVEL": "error"]
            #expect(try HeraldCLI.run(["migrate"], environment: environment).status == 0)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-json-\(UUID().uuidString).jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            let token = String(repeating: "ab", count: 32)
            try Data(
                #"{"device_id":"d1","platform":"ios","token":"\#(token)","user_id":"u1","culture":"ru-RU","zone":"w1","tags":["b","a"]}"#.utf8
            ).write(to: file)
            #expect(try HeraldCLI.run(["devices", "import", file.path], environment: environment).status == 0)
            let list = try HeraldCLI.run(["devices", "list", "--json"], environment: environment)
            #expect(list.status == 0, "\(list.stderr)")
            #expect(!list.stdout.contains(token), "tokens are shortened")
            let document = try Self.object(list.stdout)
            let devices = try #require(document["devices"] as? [[String: Any]])
            #expect(devices.count == 1 && document["limit_reached"] as? Bool == false)
            #expect(devices.first?["device_id"] as? String == "d1" && devices.first?["platform"] as? String == "ios")
            let user = try #require((devices.first?["users"] as? [[String: Any]])?.first)
            #expect(user["user_id"] as? String == "u1" && user["zone"] as? String == "w1" && user["tags"] as? [String] == ["a", "b"])
        }
    }

    @Test(.requires(.rabbitMQ)) func dlqListPrintsJSON() async throws {
        let topology = HeraldTopology(exchange: TestEnvironment.uniqueName("herald.cli.json.x"), queue: TestEnvironment.uniqueName("herald.cli.json"))
        let amqp = try await AMQPConnection.connect(try AMQPConfiguration(url: TestEnvironment.amqpURL))
        do {
            _ = try await amqp.declare(topology)
            let properties = DeadLetterHeaders.deadLetterProperties(
                original: AMQPProperties(), code: .unknownEvent, reason: "no event Nope", id: "dl-1", queue: topology.queue, eventId: "Nope",
                failedAt: Date())
            try await amqp.publish(Data("<x/>".utf8), routingKey: topology.deadLetterQueue, properties: properties)
            let environment = ["HERALD_AMQP_URL": TestEnvironment.amqpURL, "HERALD_AMQP_QUEUE": topology.queue, "HERALD_AMQP_EXCHANGE": topology.exchange]
            let list = try HeraldCLI.run(["dlq", "list", "--json"], environment: environment)
            #expect(list.status == 0, "\(list.stderr)")
            let document = try Self.object(list.stdout)
            #expect(document["queue"] as? String == topology.deadLetterQueue)
            let letter = try #require((document["dead_letters"] as? [[String: Any]])?.first)
            #expect(letter["id"] as? String == "dl-1" && letter["error"] as? String == "unknown_event" && letter["event_id"] as? String == "Nope")
            #expect(letter["reason"] as? String == "no event Nope" && letter["body_bytes"] as? Int == 4)
        } catch {
            await Self.cleanUp(amqp, topology)
            throw error
        }
        await Self.cleanUp(amqp, topology)
    }

    static func cleanUp(_ amqp: AMQPConnection, _ topology: HeraldTopology) async {
        _ = try? await amqp.deleteQueue(topology.queue)
        _ = try? await amqp.deleteQueue(topology.deadLetterQueue)
        try? await amqp.deleteExchange(topology.exchange)
        try? await amqp.deleteExchange(topology.deadLetterExchange)
        await amqp.close()
    }
}
