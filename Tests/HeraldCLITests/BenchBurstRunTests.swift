import Foundation
import HeraldPostgres
import HeraldTesting
import Testing

/// A small `herald bench --burst` against the real broker and database: the burst and the quiet
/// users' pushes reach the sandbox once each and in order, the journal holds them sent, the
/// backlog is empty, and the figures are there. And a database whose backlog table still holds
/// an earlier run's rows is refused, or emptied on request, before anything runs.
@Suite("herald bench --burst", .timeLimit(.minutes(5)))
struct BenchBurstRunTests {
    private func prepare(_ database: TestDatabase) throws -> [String: String] {
        let environment = ["HERALD_DATABASE_URL": database.url, "HERALD_AMQP_URL": TestEnvironment.amqpURL, "HERALD_LOG_LEVEL": "error"]
        #expect(try HeraldCLI.run(["migrate"], environment: environment).status == 0)
        let templates = TestEnvironment.packageRoot.appendingPathComponent("templates").path
        #expect(try HeraldCLI.run(["templates", "import", templates], environment: environment).status == 0)
        return environment
    }

    /// Published while the worker runs, and (`--publish-first`) all before it starts.
    @Test(.requires(.rabbitMQ, .postgreSQL), arguments: [false, true])
    func aBurstRunChecksOrderAndCountsAndPrintsItsFigures(publishFirst: Bool) async throws {
        try await TestDatabase.with { client, database in
            let environment = try prepare(database)
            // 150 pushes: more than worker.backlog_after (64), so the burst goes through the backlog.
            let bench = try HeraldCLI.run(
                ["bench", "--burst", "--busy-users", "2", "--busy-pushes", "150", "--quiet-users", "20", "--burst-delay", "2ms", "--json"]
                    + (publishFirst ? ["--publish-first"] : []),
                environment: environment, timeout: .seconds(240))
            #expect(bench.status == 0, "\(bench.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(bench.stdout.utf8)) as? [String: Any], "\(bench.stdout)")
            let burst = try #require(json["burst"] as? [String: Any])
            #expect(burst["accepted"] as? Int == 320)
            #expect(burst["deliveries"] as? Int == 320)
            #expect((burst["differences"] as? [Any])?.isEmpty == true)
            #expect(burst["lanes"] as? Int == 64)
            #expect(burst["prefetch"] as? Int == 300)
            #expect(burst["quietP99Milliseconds"] as? Double != nil)
            #expect(burst["quietPass"] as? Bool != nil)
            let busy = try #require(burst["busy"] as? [[String: Any]])
            #expect(busy.count == 2)
            #expect(busy.allSatisfy { ($0["seconds"] as? Double ?? 0) >= 0.3 })  // 150 round trips of 2 ms at least
            #expect(try await client.query("SELECT count(*) FROM backlog", []).first?.decode(Int.self, at: 0) == 0)
            #expect(try await client.query("SELECT count(*) FROM devices WHERE device_id LIKE 'bench-%'", []).first?.decode(Int.self, at: 0) == 0)
        }
    }

    @Test(.requires(.rabbitMQ, .postgreSQL))
    func leftoversInTheBacklogAreRefusedOrDiscarded() async throws {
        try await TestDatabase.with { client, database in
            let environment = try prepare(database)
            try await client.execute(
                "INSERT INTO backlog (order_key, seq, device_ref, position, delivery) VALUES ('gone/ios', 1, 424242, 7, '{}')", [])
            try await client.execute(
                "INSERT INTO journal (device_ref, position, message_id, attempts, user_id, state) VALUES (424242, 7, 0, 0, 'gone', 'queued')", [])
            let arguments = ["bench", "--burst", "--busy-users", "0", "--quiet-users", "3", "--burst-delay", "0"]

            let refused = try HeraldCLI.run(arguments, environment: environment, timeout: .seconds(60))
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("the backlog table holds 1 deliveries"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--discard-backlog"))
            #expect(try await client.query("SELECT count(*) FROM backlog", []).first?.decode(Int.self, at: 0) == 1)

            let discarded = try HeraldCLI.run(arguments + ["--discard-backlog"], environment: environment, timeout: .seconds(120))
            #expect(discarded.status == 0, "\(discarded.stderr)")
            #expect(try await client.query("SELECT count(*) FROM backlog", []).first?.decode(Int.self, at: 0) == 0)
            #expect(try await client.query("SELECT count(*) FROM journal WHERE device_ref = 424242", []).first?.decode(Int.self, at: 0) == 0)
        }
    }
}
