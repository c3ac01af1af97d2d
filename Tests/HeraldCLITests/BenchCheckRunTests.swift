import Foundation
import HeraldTesting
import Testing

/// A short `herald bench` against the real broker and database: its JSON holds PostgreSQL's
/// durability settings and, for every round, the deliveries the workload makes, those the
/// journal holds and the dead letters, which agree on a healthy run (its exit status is 0).
@Suite("herald bench checks its journal", .timeLimit(.minutes(5)))
struct BenchCheckRunTests {
    @Test(.requires(.rabbitMQ, .postgreSQL))
    func aHealthyRunJournalsWhatTheWorkloadMakes() async throws {
        try await TestDatabase.with { _, database in
            let environment = ["HERALD_DATABASE_URL": database.url, "HERALD_AMQP_URL": TestEnvironment.amqpURL, "HERALD_LOG_LEVEL": "error"]
            #expect(try HeraldCLI.run(["migrate"], environment: environment).status == 0)
            let templates = TestEnvironment.packageRoot.appendingPathComponent("templates").path
            #expect(try HeraldCLI.run(["templates", "import", templates], environment: environment).status == 0)

            let bench = try HeraldCLI.run(
                ["bench", "--events", "3000", "--users", "300", "--rounds", "2", "--latency-events", "200", "--latency-rate", "1000", "--json"],
                environment: environment, timeout: .seconds(240))
            #expect(bench.status == 0, "\(bench.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(bench.stdout.utf8)) as? [String: Any], "\(bench.stdout)")

            let postgres = try #require(json["postgres"] as? [String: String])
            #expect(Set(postgres.keys) == ["fsync", "synchronousCommit", "fullPageWrites"])
            #expect(postgres.values.allSatisfy { $0 == "on" || $0 == "off" || $0 == "local" || $0 == "remote_write" || $0 == "remote_apply" })
            #expect((json["bareRounds"] as? [Any])?.count == 2)

            let rounds = try #require(json["rounds"] as? [[String: Any]])
            #expect(rounds.count == 2)
            for round in rounds {
                let expected = try #require(round["expectedDeliveries"] as? Int)
                // 3,000 events: 150 broadcasts to 20 devices, 450 three-user and 2,400 one-user.
                #expect(expected > 150 * 20 + 2_400 + 450 * 2 && expected <= 150 * 20 + 2_400 + 450 * 3)
                #expect(round["journaledDeliveries"] as? Int == expected)
                #expect(round["deliveries"] as? Int == expected)
                #expect(round["deadLetters"] as? Int == 0)
                #expect((round["differences"] as? [Any])?.isEmpty == true)
            }
        }
    }
}
