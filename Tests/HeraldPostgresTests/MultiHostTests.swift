import Foundation
import HeraldPostgres
import HeraldTesting
import Testing

/// A URL of several hosts reaches the database through the first that answers: libpq tries
/// them in turn, as it does for `psql`.
@Suite("Several hosts")
struct MultiHostTests {
    @Test func connectsThroughTheSecondHostWhenTheFirstIsDown() async throws {
        try await TestDatabase.with { _, database in
            let host = database.configuration.host ?? "127.0.0.1"
            let authority = "\(host.contains(":") ? "[\(host)]" : host):\(database.configuration.port)"
            // Nothing listens on port 1: the first host refuses at once.
            let url = database.url.replacingOccurrences(of: "@\(authority)/", with: "@127.0.0.1:1,\(authority)/") + "?target_session_attrs=read-write"
            try #require(url.contains("127.0.0.1:1,"), "the test URL has the form user@host:port/db: \(database.url)")
            let configuration = try PostgresConfiguration(url: url)
            let connection = try await PostgresConnection.connect(configuration: configuration)
            #expect(try await connection.query("SELECT current_database()").first?.decode(String.self, at: 0) == database.name)
            await connection.close()

            let client = try PostgresClient(configuration: configuration)
            #expect(try await client.query("SELECT 1", []).first?.decode(Int.self, at: 0) == 1)
            await client.close()
        }
    }
}
