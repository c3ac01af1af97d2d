import Foundation
import HeraldTesting
import Testing

@testable import HeraldPostgres

/// The name of the thread running the caller (a plain function: `Thread.current` is not
/// available directly in async code).
func currentThreadName() -> String { Thread.current.name ?? "" }

@Suite("Connection pool")
struct PoolTests {
    @Test func thousandConcurrentQueriesRunOnTheConnectionsOwnThreads() async throws {
        try await TestDatabase.with(poolSize: 4) { client, _ in
            let callerThread = currentThreadName()
            let start = ContinuousClock.now
            let observations = try await withThrowingTaskGroup(of: (String, Bool, Int32).self) { group in
                for index in 0..<1000 {
                    group.addTask {
                        try await client.withConnection { connection in
                            try await connection.run { (session) throws(PostgresError) in
                                let row = try session.execute("SELECT pg_backend_pid(), $1::int8", [index.postgresValue]).first
                                guard let row, try row.decode(Int.self, at: 1) == index else {
                                    throw PostgresError(code: .clientError, message: "wrong row")
                                }
                                return (currentThreadName(), Thread.isMainThread, try row.decode(Int32.self, at: 0))
                            }
                        }
                    }
                }
                var all: [(String, Bool, Int32)] = []
                for try await observation in group { all.append(observation) }
                return all
            }
            let elapsed = ContinuousClock.now - start
            #expect(observations.count == 1000)
            let threads = Set(observations.map(\.0))
            #expect(threads.allSatisfy { $0.hasPrefix("herald-pg-") }, "\(threads)")
            #expect(threads.count <= 4)
            #expect(!threads.contains(callerThread))
            #expect(!callerThread.hasPrefix("herald-pg"))
            #expect(observations.allSatisfy { !$0.1 })
            #expect(Set(observations.map(\.2)).count <= 4)
            print("1000 concurrent withConnection queries over 4 connections: \(elapsed), threads \(threads.sorted())")

            // The plain query path, measured.
            let count = 5000
            let queryStart = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    group.addTask {
                        let value = try await client.query("SELECT $1::int8 + 1", [index]).first?.decode(Int.self, at: 0)
                        if value != index + 1 { throw PostgresError(code: .clientError, message: "wrong answer") }
                    }
                }
                try await group.waitForAll()
            }
            let queryElapsed = ContinuousClock.now - queryStart
            print("client.query: \(count) concurrent prepared SELECTs, pool 4: \(rate(count, queryElapsed)) ops/s")
        }
    }

    @Test func waitersAreServedInArrivalOrder() async throws {
        try await TestDatabase.with(poolSize: 1) { client, _ in
            let order = Recorder<Int>()
            let held = try await client.pool.acquire()
            var waiters: [Task<Void, any Error>] = []
            do {
                for index in 0..<5 {
                    waiters.append(
                        Task {
                            try await client.withConnection { connection in
                                await order.add(index)
                                _ = try await connection.query("SELECT 1")
                            }
                        })
                    try await waitUntil("waiter \(index) queued", timeout: .seconds(5)) { client.pool.waiterCount == index + 1 }
                }
            } catch {
                client.pool.release(held)
                throw error
            }
            client.pool.release(held)
            for waiter in waiters { try await waiter.value }
            #expect(await order.items == [0, 1, 2, 3, 4])
        }
    }

    @Test func cancelledWaiterLeavesTheQueue() async throws {
        try await TestDatabase.with(poolSize: 1) { client, _ in
            try await client.withConnection { _ in
                let waiter = Task { () async throws -> Int in
                    try await client.withConnection { _ in 1 }
                }
                try await waitUntil("waiter queued", timeout: .seconds(5)) { client.pool.waiterCount == 1 }
                waiter.cancel()
                switch await waiter.result {
                case .success: Issue.record("a cancelled waiter must not get a connection while it is held")
                case .failure(let error): #expect((error as? PostgresError)?.code == .cancelled)
                }
                #expect(client.pool.waiterCount == 0)
            }
            #expect(try await client.query("SELECT 1").first?.decode(Int.self, at: 0) == 1)
        }
    }

    @Test func closedClientRefusesWork() async throws {
        try await TestDatabase.with(poolSize: 2) { _, database in
            let client = try PostgresClient(configuration: database.configuration)
            #expect(try await client.query("SELECT 1").count == 1)
            await client.close()
            do {
                _ = try await client.query("SELECT 1")
                Issue.record("a closed client must refuse work")
            } catch let error as PostgresError {
                #expect(error.code == .closed)
            }
        }
    }

    @Test func unreachableServerFailsWithConnectionFailed() async throws {
        var configuration = PostgresConfiguration(host: "127.0.0.1", port: 1, user: "nobody", database: "none")
        configuration.connectTimeout = .seconds(2)
        let client = try PostgresClient(configuration: configuration)
        do {
            _ = try await client.query("SELECT 1")
            Issue.record("port 1 must refuse the connection")
        } catch {
            #expect(error.code == .connectionFailed)
            #expect(error.call == "PQconnectdbParams")
            #expect(!error.message.isEmpty)
        }
        await client.close()
    }
}

func rate(_ count: Int, _ elapsed: Duration) -> Int {
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Int(Double(count) / seconds)
}
