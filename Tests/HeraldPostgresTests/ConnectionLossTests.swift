import HeraldPostgres
import HeraldTesting
import Testing

/// What callers see when a connection breaks. Documented behaviour: the statement in flight
/// fails with `connectionLost` and is not retried (it may have run); a break noticed before
/// sending (idle connection terminated) is repaired before the statement is sent; the next
/// statement always gets a fresh connection.
@Suite("Connection loss and recovery")
struct ConnectionLossTests {
    @Test func inFlightQueryFailsWithConnectionLostAndTheNextSucceeds() async throws {
        try await TestDatabase.with(poolSize: 1) { client, database in
            let pid = try #require(try await client.query("SELECT pg_backend_pid()").first?.decode(Int32.self, at: 0))
            let sleeper = Task { () async throws(PostgresError) -> PostgresQueryResult in
                try await client.query("SELECT pg_sleep(30)")
            }
            try await waitUntil("pg_sleep running", timeout: .seconds(10)) {
                let rows = try await database.admin.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE '%pg_sleep%'", [pid]
                )
                return try rows.first?.decode(Int.self, at: 0) == 1
            }
            try await database.terminate(pid)
            switch await sleeper.result {
            case .success: Issue.record("the terminated query must fail")
            case .failure(let error): #expect((error as? PostgresError)?.code == .connectionLost, "\(String(reflecting: error))")
            }
            let next = try #require(try await client.query("SELECT pg_backend_pid()").first?.decode(Int32.self, at: 0))
            #expect(next != pid)
        }
    }

    @Test func idleConnectionTerminatedIsReplacedBeforeSending() async throws {
        try await TestDatabase.with(poolSize: 1) { client, database in
            let sql = "SELECT pg_backend_pid(), $1::text"
            let first = try #require(try await client.query(sql, ["a"]).first?.decode(Int32.self, at: 0))
            try await database.terminate(first)
            // The same prepared SQL again: a new connection, prepared again, no error.
            let row = try #require(try await client.query(sql, ["b"]).first)
            #expect(try row.decode(Int32.self, at: 0) != first)
            #expect(try row.decode(String.self, at: 1) == "b")
        }
    }

    @Test func outageFailsFastThenRecoversWhenTheServerIsBack() async throws {
        try await TestDatabase.with(
            poolSize: 1,
            configure: {
                $0.reconnectInitialDelay = .milliseconds(50)
                $0.reconnectMaxDelay = .milliseconds(200)
                $0.connectTimeout = .seconds(2)
            }
        ) { client, database in
            let pid = try #require(try await client.query("SELECT pg_backend_pid()").first?.decode(Int32.self, at: 0))
            // Simulate the server going away for this database only (the shared server keeps
            // running): refuse new connections and kill the existing one.
            try await database.server.execute("ALTER DATABASE \(database.name) ALLOW_CONNECTIONS false")
            try await database.terminate(pid)
            for _ in 0..<3 {
                do {
                    _ = try await client.query("SELECT 1")
                    Issue.record("queries must fail while the database refuses connections")
                } catch let error as PostgresError {
                    #expect(error.code == .connectionFailed)
                }
            }
            try await database.server.execute("ALTER DATABASE \(database.name) ALLOW_CONNECTIONS true")
            let start = ContinuousClock.now
            try await waitUntil("recovery", timeout: .seconds(10)) {
                (try? await client.query("SELECT 1").first?.decode(Int.self, at: 0)) == 1
            }
            print("recovered \(ContinuousClock.now - start) after the database accepted connections again")
        }
    }

    @Test func lostTransactionNeverContinuesOnANewConnection() async throws {
        try await TestDatabase.with(poolSize: 1) { client, database in
            try await client.execute("CREATE TABLE t (id int)")
            let codes = Recorder<PostgresError.Code>()
            let outcome = await capture {
                try await client.withTransaction { tx in
                    try await tx.execute("INSERT INTO t VALUES (1)")
                    let pid = try await tx.connection.backendPID()
                    try await database.terminate(pid)
                    for value in [2, 3] {
                        do { try await tx.execute("INSERT INTO t VALUES ($1)", [value]) } catch let error as PostgresError { await codes.add(error.code) }
                    }
                }
            }
            #expect(await codes.items == [.connectionLost, .connectionLost])
            switch outcome {
            case .success: Issue.record("COMMIT of a lost transaction must fail")
            case .failure(let error): #expect((error as? PostgresError)?.code == .connectionLost)
            }
            // Nothing of the transaction survived, and no statement ran outside it.
            #expect(try await client.query("SELECT count(*) FROM t").first?.decode(Int.self, at: 0) == 0)
        }
    }
}

actor Recorder<Item: Sendable> {
    private(set) var items: [Item] = []
    func add(_ item: Item) { items.append(item) }
}

func capture<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
