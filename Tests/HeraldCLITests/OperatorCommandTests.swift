import Foundation
import HeraldAMQP
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

@testable import herald

/// `herald migrate`, `templates import`, `devices import|list` and `publish`, run as the
/// operator would, against a fresh database and a unique queue.
@Suite("Operator commands", .timeLimit(.minutes(2)))
struct OperatorCommandTests {
    @Test func migrateImportTemplatesAndDevicesThenListThem() async throws {
        try await TestDatabase.with { _, database in
            let environment = ["HERALD_DATABASE_URL": database.url, "HERALD_LOG_LEVEL": "error"]
            let migrate = try HeraldCLI.run(["migrate"], environment: environment)
            #expect(migrate.status == 0, "\(migrate.stderr)")
            #expect(migrate.stdout.contains("Applied migrations 1"))
            #expect(try HeraldCLI.run(["migrate"], environment: environment).stdout.contains("up to date"))

            let templates = TestEnvironment.packageRoot.appendingPathComponent("templates").path
            let imported = try HeraldCLI.run(["templates", "import", templates], environment: environment)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout.contains("Imported 80 templates for 20 events"))

            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-ops-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let csv = folder.appendingPathComponent("devices.csv")
            try Data(
                """
                device_id,platform,token,user_id,culture,zone,branch,tags,app
                d1,ios,\(String(repeating: "ab", count: 32)),u1,ru-RU,w1,101,transfers;account,
                d2,android,fcm-token-2,u1,en-US,,,,
                d3,windows,x,u2,ru-RU,,,,
                d4,ios,t4,,ru-RU,,,,
                "d,5",android,fcm-token-5,u3,ru-RU,,,,
                """.utf8
            ).write(to: csv)
            let devices = try HeraldCLI.run(["devices", "import", csv.path], environment: environment)
            #expect(devices.status == 1, "bad rows make the exit status 1")
            #expect(devices.stderr.contains("devices.csv:4: platform 'windows' is not ios or android"))
            #expect(devices.stderr.contains("devices.csv:5: user_id is missing"))
            #expect(devices.stdout.contains("Imported 3 subscriptions from 3 rows; 2 bad rows."))
            #expect(devices.stdout.contains("Bad rows at lines 4, 5."), "\(devices.stdout)")

            let list = try HeraldCLI.run(["devices", "list", "--user", "u1"], environment: environment)
            #expect(list.status == 0)
            #expect(list.stdout.contains("d1\tdefault\tios") && list.stdout.contains("d2\tdefault\tandroid"))
            #expect(list.stdout.contains("tags=account;transfers"))
            #expect(!list.stdout.contains(String(repeating: "ab", count: 32)), "tokens are shortened")
            #expect(list.stdout.contains("2 device(s)"))
            #expect(try HeraldCLI.run(["devices", "list"], environment: environment).stdout.contains("d,5"))
        }
    }

    /// A file larger than one chunk is streamed and written chunk by chunk; every row arrives.
    @Test func devicesImportStreamsAFileOfManyChunks() async throws {
        try await TestDatabase.with { _, database in
            let environment = ["HERALD_DATABASE_URL": database.url, "HERALD_LOG_LEVEL": "error"]
            #expect(try HeraldCLI.run(["migrate"], environment: environment).status == 0)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-stream-\(UUID().uuidString).jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            let rows = DevicesCommand.Import.chunkRows * 2 + 123
            var text = ""
            for index in 0..<rows {
                text += #"{"device_id":"s\#(index)","platform":"android","token":"t\#(index)","user_id":"u\#(index % 100)","culture":"ru-RU"}"# + "\n"
                if index == 7_000 { text += "{broken\n" }
            }
            try Data(text.utf8).write(to: file)
            let result = try HeraldCLI.run(["devices", "import", file.path], environment: environment)
            #expect(result.status == 1, "one bad row")
            #expect(result.stdout.contains("Imported \(rows) subscriptions from \(rows) rows; 1 bad rows."), "\(result.stdout)")
            #expect(result.stdout.contains("Bad rows at lines 7002."), "\(result.stdout)")
            let list = try HeraldCLI.run(["devices", "list", "--user", "u7", "--limit", "1000"], environment: environment)
            #expect(list.stdout.contains("\(rows / 100 + (rows % 100 > 7 ? 1 : 0)) device(s)"), "\(list.stdout)")
        }
    }

    @Test func templatesImportNamesTheFileOfABrokenText() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-tpl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <root>
              <data name="Title" xml:space="preserve"><value>Wallet One</value></data>
              <data name="TransferIssued" xml:space="preserve"><value>Перевод {0</value></data>
            </root>
            """.utf8
        ).write(to: folder.appendingPathComponent("AppleMessages.ru-RU.resx"))
        let result = try HeraldCLI.run(["templates", "import", folder.path], environment: ["HERALD_DATABASE_URL": "postgres://postgres@127.0.0.1:1/none"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("AppleMessages.ru-RU.resx"))
        #expect(result.stderr.contains("malformedTemplate"))
        #expect(result.stderr.contains("nothing was imported"))
    }

    @Test(.requires(.rabbitMQ)) func publishSetsContentTypeHeadersAndConfirms() async throws {
        let queue = TestEnvironment.uniqueName("herald.cli.publish")
        let exchange = TestEnvironment.uniqueName("herald.cli.x")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-pub-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sample = TestEnvironment.packageRoot.appendingPathComponent("deploy/local/sample-event.xml").path
        let json = folder.appendingPathComponent("event.json")
        try Data(
            #"{"EventId":"TransferIssued","EventType":"Message","EventDateTime":"2015-01-01T00:00:00.0000001+03:00","EventFilters":[{"Name":"UserId","Value":"1"}],"EventParams":[]}"#
                .utf8
        ).write(to: json)
        let bad = folder.appendingPathComponent("bad.xml")
        try Data("<PushNotification><EventId>".utf8).write(to: bad)
        let environment = ["HERALD_AMQP_URL": TestEnvironment.amqpURL, "HERALD_AMQP_QUEUE": queue, "HERALD_AMQP_EXCHANGE": exchange]

        let refused = try HeraldCLI.run(["publish", bad.path], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("bad.xml") && refused.stderr.contains("--raw"))

        let published = try HeraldCLI.run(["publish", "--avoid-duplication", "--message-id", "m-1", sample, json.path], environment: environment)
        #expect(published.status == 0, "\(published.stderr)")
        #expect(published.stdout.contains("Published 2 message(s)"))
        #expect(try HeraldCLI.run(["publish", "--raw", bad.path], environment: environment).status == 0)

        let amqp = try await AMQPConnection.connect(try AMQPConfiguration(url: TestEnvironment.amqpURL))
        do {
            let xml = try #require(try await amqp.get(queue: queue, autoAck: true))
            #expect(xml.properties.contentType == "application/xml")
            #expect(xml.properties.messageID == "m-1")
            #expect(xml.properties.headers["AvoidDublication"] == .bool(true))
            #expect(xml.properties.deliveryMode == .persistent)
            #expect(xml.routingKey == queue)
            let jsonMessage = try #require(try await amqp.get(queue: queue, autoAck: true))
            #expect(jsonMessage.properties.contentType == "application/json")
            let raw = try #require(try await amqp.get(queue: queue, autoAck: true))
            #expect(raw.body == (try Data(contentsOf: bad)))
            #expect(raw.properties.headers["AvoidDublication"] == nil)
        } catch {
            await amqp.close()
            throw error
        }
        _ = try? await amqp.deleteQueue(queue)
        _ = try? await amqp.deleteQueue(queue + ".dead")
        try? await amqp.deleteExchange(exchange)
        try? await amqp.deleteExchange(queue + ".dlx")
        await amqp.close()
    }

    /// Seed 000's own `.resx` format (a body per event, no title) imports.
    @Test func seedFormatTemplatesImport() async throws {
        try await TestDatabase.with { _, database in
            let environment = ["HERALD_DATABASE_URL": database.url, "HERALD_LOG_LEVEL": "error"]
            #expect(try HeraldCLI.run(["migrate"], environment: environment).status == 0)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-seed-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            for name in ["AppleMessages.ru-RU.resx", "AndroidMessages.ru-RU.resx"] {
                try Data(SeedSampleDocuments.resx.utf8).write(to: folder.appendingPathComponent(name))
            }
            let imported = try HeraldCLI.run(["templates", "import", folder.path], environment: environment)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout.contains("Imported 2 templates for 1 events"), "\(imported.stdout)")
        }
    }

    @Test func deviceFilesParseJSONLinesAndQuotedCSV() {
        let (json, jsonProblems) = DeviceFileParser.parse(
            """
            {"device_id": "a", "platform": "ios", "token": "t", "user_id": "1", "culture": "ru-RU", "tags": ["News", "x"]}
            not json
            {"device_id": "b", "platform": "android", "user_id": 2, "culture": "en-US", "app": "com.example.other"}
            """)
        #expect(json.map(\.deviceId) == ["a", "b"])
        #expect(json[0].tags == ["news", "x"])
        #expect(json[1].userId == "2" && json[1].app == "com.example.other" && json[1].token == nil)
        #expect(jsonProblems.map(\.line) == [2])
        #expect(DeviceFileParser.splitCSV(#"a,"b,c","d ""q""",,e"#) == ["a", "b,c", #"d "q""#, "", "e"])
        let (csv, _) = DeviceFileParser.parse("x1,ios,tok,9,ru-RU,w1,101,a;b,\n")
        #expect(csv.first?.zoneId == "w1" && csv.first?.branchId == "101" && csv.first?.tags == ["a", "b"])
    }
}
