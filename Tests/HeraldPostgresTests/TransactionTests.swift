import HeraldPostgres
import HeraldTesting
import Testing

@Suite("Transactions")
struct TransactionTests {
    struct Boom: Error {}

    @Test func commitsAndRollsBack() async throws {
        try await TestDatabase.with { client, _ in
            try await client.execute("CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)")
            let pids = try await client.withTransaction { tx in
                try await tx.execute("INSERT INTO accounts VALUES ($1, $2)", [1, 100])
                try await tx.execute("INSERT INTO accounts VALUES ($1, $2)", [2, 50])
                try await tx.execute("UPDATE accounts SET balance = balance - $1 WHERE id = $2", [30, 1])
                // Every statement ran on the same connection.
                let first = try await tx.query("SELECT pg_backend_pid()").first?.decode(Int32.self, at: 0)
                let second = try await tx.query("SELECT pg_backend_pid()").first?.decode(Int32.self, at: 0)
                return [first, second]
            }
            #expect(pids[0] != nil && pids[0] == pids[1])
            #expect(try await client.query("SELECT sum(balance) FROM accounts").first?.decode(Int.self, at: 0) == 120)

            await #expect(throws: Boom.self) {
                try await client.withTransaction { tx in
                    try await tx.execute("UPDATE accounts SET balance = 0")
                    try await tx.execute("INSERT INTO accounts VALUES ($1, $2)", [3, 1])
                    throw Boom()
                }
            }
            #expect(try await client.query("SELECT sum(balance), count(*) FROM accounts").first?.decode(Int.self, at: 0) == 120)
            #expect(try await client.query("SELECT count(*) FROM accounts").first?.decode(Int.self, at: 0) == 2)
        }
    }

    @Test func failedStatementRollsBackEvenIfTheBodySwallowsIt() async throws {
        try await TestDatabase.with { client, _ in
            try await client.execute("CREATE TABLE items (id int PRIMARY KEY)")
            do {
                try await client.withTransaction { tx in
                    try await tx.execute("INSERT INTO items VALUES (1)")
                    _ = try? await tx.execute("INSERT INTO items VALUES (1)")  // duplicate: aborts the transaction
                }
                Issue.record("COMMIT of an aborted transaction must throw")
            } catch let error as PostgresError {
                #expect(error.sqlState == "25P02")
            }
            #expect(try await client.query("SELECT count(*) FROM items").first?.decode(Int.self, at: 0) == 0)
        }
    }

    @Test func isolationLevelAndReadOnlyAreApplied() async throws {
        try await TestDatabase.with { client, _ in
            let level = try await client.withTransaction(isolation: .serializable) { tx in
                try await tx.query("SHOW transaction_isolation").first?.decode(String.self, at: 0)
            }
            #expect(level == "serializable")
            let repeatable = try await client.withTransaction(isolation: .repeatableRead) { tx in
                try await tx.query("SHOW transaction_isolation").first?.decode(String.self, at: 0)
            }
            #expect(repeatable == "repeatable read")
            try await client.execute("CREATE TABLE t (id int)")
            do {
                try await client.withTransaction(readOnly: true) { tx in
                    _ = try await tx.execute("INSERT INTO t VALUES (1)")
                }
                Issue.record("a read-only transaction must refuse writes")
            } catch let error as PostgresError {
                #expect(error.sqlState == "25006")
            }
        }
    }

    @Test func connectionReturnedInsideATransactionIsReset() async throws {
        try await TestDatabase.with(poolSize: 1) { client, database in
            try await client.execute("CREATE TABLE t (id int)")
            try await client.withConnection { connection in
                try await connection.execute("BEGIN")
                try await connection.execute("INSERT INTO t VALUES (1)")
                // Returned without COMMIT.
            }
            // The open transaction was rolled back, and the next statement autocommits: another
            // connection sees its row at once.
            #expect(try await client.query("SELECT count(*) FROM t").first?.decode(Int.self, at: 0) == 0)
            try await client.execute("INSERT INTO t VALUES (2)")
            #expect(try await database.admin.query("SELECT count(*) FROM t").first?.decode(Int.self, at: 0) == 1)
        }
    }
}
