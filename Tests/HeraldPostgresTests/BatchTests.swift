import HeraldPostgres
import HeraldTesting
import Testing

@Suite("Pipelined batches")
struct BatchTests {
    @Test func batchInsertsAndMeasuresTheRate() async throws {
        try await TestDatabase.with(poolSize: 1) { client, _ in
            try await client.execute("CREATE UNLOGGED TABLE log (id int PRIMARY KEY, device text NOT NULL, tags text[])")
            let count = 20_000
            let sets: [[any PostgresBindable]] = (0..<count).map { [$0, "device-\($0)'\"", ["a,b", "{c}"]] }
            let start = ContinuousClock.now
            let affected = try await client.executeBatch("INSERT INTO log (id, device, tags) VALUES ($1, $2, $3)", sets)
            let batchElapsed = ContinuousClock.now - start
            #expect(affected.count == count)
            #expect(affected.allSatisfy { $0 == 1 })
            #expect(try await client.query("SELECT count(*) FROM log").first?.decode(Int.self, at: 0) == count)
            let sample = try await client.query("SELECT device, tags FROM log WHERE id = $1", [777]).first
            #expect(try sample?.decode(String.self, column: "device") == "device-777'\"")
            #expect(try sample?.decode([String].self, column: "tags") == ["a,b", "{c}"])

            let sequentialCount = 2_000
            let sequentialStart = ContinuousClock.now
            for id in count..<(count + sequentialCount) {
                try await client.execute("INSERT INTO log (id, device, tags) VALUES ($1, $2, $3)", [id, "d", ["x"]])
            }
            let sequentialElapsed = ContinuousClock.now - sequentialStart

            // SELECTs in a pipeline.
            let lookups = (0..<count).map { [$0 as any PostgresBindable] }
            let selectStart = ContinuousClock.now
            let results = try await client.queryBatch("SELECT device FROM log WHERE id = $1", lookups)
            let selectElapsed = ContinuousClock.now - selectStart
            #expect(results.count == count)
            #expect(try results[12_345].first?.decode(String.self, at: 0) == "device-12345'\"")

            let sequentialSelectStart = ContinuousClock.now
            for id in 0..<sequentialCount {
                _ = try await client.query("SELECT device FROM log WHERE id = $1", [id])
            }
            let sequentialSelectElapsed = ContinuousClock.now - sequentialSelectStart
            print(
                """
                INSERT (unlogged table), one connection: pipelined batch \(rate(count, batchElapsed)) ops/s \
                vs one-at-a-time \(rate(sequentialCount, sequentialElapsed)) ops/s
                SELECT by primary key, one connection: pipelined batch \(rate(count, selectElapsed)) ops/s \
                vs one-at-a-time \(rate(sequentialCount, sequentialSelectElapsed)) ops/s
                """)
        }
    }

    @Test func failingItemAbortsTheWholeBatch() async throws {
        try await TestDatabase.with(poolSize: 1) { client, _ in
            try await client.execute("CREATE TABLE keys (id int PRIMARY KEY)")
            try await client.execute("INSERT INTO keys VALUES (50)")
            let sets: [[any PostgresBindable]] = (0..<100).map { [$0] }
            do {
                try await client.executeBatch("INSERT INTO keys VALUES ($1)", sets)
                Issue.record("the duplicate must fail the batch")
            } catch let error as PostgresError {
                #expect(error.code == .uniqueViolation)
                #expect(error.message.contains("batch item 50"))
            }
            #expect(try await client.query("SELECT count(*) FROM keys").first?.decode(Int.self, at: 0) == 1)
            // The connection left pipeline mode cleanly and works.
            #expect(try await client.executeBatch("INSERT INTO keys VALUES ($1)", [[1], [2]]) == [1, 1])
            #expect(try await client.executeBatch("INSERT INTO keys VALUES ($1)", []) == [])
        }
    }

    /// Large parameters and large results at once: the pipeline must keep reading while it
    /// writes, or both sides block on full socket buffers.
    @Test func largeBatchDoesNotDeadlock() async throws {
        try await TestDatabase.with(poolSize: 1) { client, _ in
            let chunk = String(repeating: "x", count: 64 * 1024)
            let sets: [[any PostgresBindable]] = (0..<300).map { [chunk + String($0), 2] }
            let results = try await client.queryBatch("SELECT repeat($1, $2::int) AS v", sets)
            #expect(results.count == 300)
            #expect(try results[299].first?.decode(String.self, column: "v") == String(repeating: chunk + "299", count: 2))
        }
    }

    @Test func batchInsideATransactionRollsBackWithIt() async throws {
        try await TestDatabase.with(poolSize: 1) { client, _ in
            struct Abort: Error {}
            try await client.execute("CREATE TABLE keys (id int PRIMARY KEY)")
            await #expect(throws: Abort.self) {
                try await client.withTransaction { tx in
                    try await tx.executeBatch("INSERT INTO keys VALUES ($1)", [[1], [2], [3]])
                    #expect(try await tx.query("SELECT count(*) FROM keys").first?.decode(Int.self, at: 0) == 3)
                    throw Abort()
                }
            }
            #expect(try await client.query("SELECT count(*) FROM keys").first?.decode(Int.self, at: 0) == 0)
        }
    }
}
