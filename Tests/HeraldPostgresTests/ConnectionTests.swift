import HeraldPostgres
import HeraldTesting
import Testing

@Suite("Standalone connection")
struct ConnectionTests {
    @Test func connectsEagerlyRunsScriptsAndCloses() async throws {
        try await TestDatabase.with { _, database in
            let connection = try await PostgresConnection.connect(configuration: database.configuration)
            let pid = try await connection.backendPID()
            #expect(try await database.backendPIDs(applicationName: "herald-tests").contains(pid))
            try await connection.executeScript(
                """
                CREATE TABLE a (id int);
                INSERT INTO a VALUES (1), (2);
                CREATE TABLE b AS SELECT * FROM a;
                """
            )
            #expect(try await connection.query("SELECT count(*) FROM b").first?.decode(Int.self, at: 0) == 2)
            await connection.close()
            do {
                _ = try await connection.query("SELECT 1")
                Issue.record("a closed connection must refuse work")
            } catch let error as PostgresError {
                #expect(error.code == .closed)
            }
            try await waitUntil("backend gone after close", timeout: .seconds(5)) {
                try await !database.backendPIDs(applicationName: "herald-tests").contains(pid)
            }
        }
    }

    @Test func statementTimeoutIsTyped() async throws {
        try await TestDatabase.with(poolSize: 1, configure: { $0.statementTimeout = .milliseconds(200) }) { client, _ in
            do {
                _ = try await client.query("SELECT pg_sleep(5)")
                Issue.record("the statement must time out")
            } catch let error as PostgresError {
                #expect(error.code == .timeout)
                #expect(error.sqlState == "57014")
            }
            #expect(try await client.query("SELECT 1").first?.decode(Int.self, at: 0) == 1)
        }
    }

    @Test func eagerConnectToAMissingDatabaseFails() async throws {
        var configuration = try TestDatabase.serverConfiguration()
        configuration.database = "herald_no_such_database_\(UInt32.random(in: 0...UInt32.max))"
        do {
            _ = try await PostgresConnection.connect(configuration: configuration)
            Issue.record("connecting to a missing database must fail")
        } catch {
            #expect(error.code == .connectionFailed)
        }
    }
}
