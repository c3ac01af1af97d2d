import Foundation
import HeraldPostgres

/// A fresh database per test: created from the test server's URL, dropped (WITH FORCE)
/// afterwards whatever happens. Without a reachable server the test is cancelled or fails, as
/// ``TestEnvironment/require(_:)`` says.
public struct TestDatabase: Sendable {
    public let name: String
    /// Points at the fresh database.
    public let configuration: PostgresConfiguration
    /// A client on the fresh database for test bookkeeping (terminating backends, checks).
    public let admin: PostgresClient
    /// A client on the server's test database (outside the fresh one), e.g. to refuse
    /// connections to the fresh database.
    public let server: PostgresClient

    public static var serverURL: String { TestEnvironment.databaseURL }

    public static func serverConfiguration() throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(url: serverURL)
        configuration.applicationName = "herald-tests"
        configuration.statementTimeout = .seconds(60)
        configuration.poolSize = 1
        return configuration
    }

    /// Creates a database, runs `body` with a client on it, then drops it.
    public static func with<T>(
        poolSize: Int = 4,
        configure: (inout PostgresConfiguration) -> Void = { _ in },
        _ body: (PostgresClient, TestDatabase) async throws -> T
    ) async throws -> T {
        try await TestEnvironment.require(.postgreSQL)
        let server = try PostgresClient(configuration: try serverConfiguration())
        let name = "herald_t_" + String(UInt64.random(in: .min ... .max), radix: 16)
        do {
            try await server.withConnection { connection in
                // The name is generated here from hex digits: nothing to escape.
                try await connection.executeScript("CREATE DATABASE \(name)")
            }
        } catch {
            await server.close()
            throw TestEnvironmentError("PostgreSQL at \(serverURL) is unreachable or refused CREATE DATABASE: \(error)")
        }

        var configuration = try serverConfiguration()
        configuration.database = name
        configuration.poolSize = poolSize
        configure(&configuration)
        var adminConfiguration = try serverConfiguration()
        adminConfiguration.database = name
        adminConfiguration.applicationName = "herald-tests-admin"

        var result: Result<T, any Error>
        let client = try PostgresClient(configuration: configuration)
        let admin = try PostgresClient(configuration: adminConfiguration)
        do {
            result = .success(try await body(client, TestDatabase(name: name, configuration: configuration, admin: admin, server: server)))
        } catch {
            result = .failure(error)
        }
        await client.close()
        await admin.close()
        do {
            try await server.withConnection { connection in
                try await connection.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }
        } catch {
            if case .success = result { result = .failure(TestEnvironmentError("could not drop test database \(name): \(error)")) }
        }
        await server.close()
        return try result.get()
    }

    /// Server process ids of client backends on this database other than the admin's.
    /// Asked through ``server``, so it works while the database refuses connections.
    public func backendPIDs(applicationName: String? = nil) async throws -> [Int32] {
        let rows = try await server.query(
            """
            SELECT pid FROM pg_stat_activity
            WHERE datname = $1 AND backend_type = 'client backend'
              AND application_name <> 'herald-tests-admin'
              AND ($2::text IS NULL OR application_name = $2)
            ORDER BY pid
            """,
            [name, applicationName]
        )
        return try rows.map { (row) throws(PostgresError) in try row.decode(Int32.self, at: 0) }
    }

    /// Terminates a backend and waits (bounded) until it is gone.
    public func terminate(_ pid: Int32) async throws {
        let terminated = try await server.query("SELECT pg_terminate_backend($1)", [pid])
        guard try terminated.first?.decode(Bool.self, at: 0) == true else {
            throw TestEnvironmentError("pg_terminate_backend(\(pid)) found no such backend")
        }
        try await waitUntil("backend \(pid) gone", timeout: .seconds(10)) {
            let rows = try await server.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [pid])
            return try rows.first?.decode(Int.self, at: 0) == 0
        }
    }
}
