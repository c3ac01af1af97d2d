import Testing

@testable import HeraldPostgres

@Suite("PostgresConfiguration URL parsing")
struct PostgresConfigurationTests {
    @Test func parsesEveryPartAndPercentDecodes() throws {
        let configuration = try PostgresConfiguration(
            url: "postgres://us%40er:p%3Ass%2Fw%20rd@db.example.com:6543/my%20db?sslmode=require&application_name=herald%20worker"
        )
        #expect(configuration.user == "us@er")
        #expect(configuration.password == "p:ss/w rd")
        #expect(configuration.host == "db.example.com")
        #expect(configuration.port == 6543)
        #expect(configuration.database == "my db")
        #expect(configuration.sslMode == .require)
        #expect(configuration.applicationName == "herald worker")
        #expect(configuration.poolSize == 4)
    }

    @Test func acceptsPostgresqlSchemeAndDefaults() throws {
        let configuration = try PostgresConfiguration(url: "postgresql://localhost")
        #expect(configuration.host == "localhost")
        #expect(configuration.port == 5432)
        #expect(configuration.user == nil)
        #expect(configuration.password == nil)
        #expect(configuration.database == nil)
        #expect(configuration.sslMode == .prefer)

        let socket = try PostgresConfiguration(url: "postgres:///herald?host=%2Fvar%2Frun%2Fpostgresql")
        #expect(socket.host == "/var/run/postgresql")
        #expect(socket.database == "herald")
    }

    @Test func parsesIPv6AndHeraldOptions() throws {
        let configuration = try PostgresConfiguration(
            url: "postgres://app@[::1]:5433/herald?pool_size=9&statement_timeout=2500&connect_timeout=3"
        )
        #expect(configuration.host == "::1")
        #expect(configuration.port == 5433)
        #expect(configuration.user == "app")
        #expect(configuration.poolSize == 9)
        #expect(configuration.statementTimeout == .milliseconds(2500))
        #expect(configuration.connectTimeout == .seconds(3))
    }

    @Test func descriptionNeverShowsThePassword() throws {
        let configuration = try PostgresConfiguration(url: "postgres://herald:s3cr%3Bet@db:5432/herald")
        #expect(!configuration.description.contains("s3cr"))
        #expect(configuration.description.contains("herald:***@db:5432/herald"))
    }

    @Test func passesValuesAsKeywordPairsWithoutEscaping() throws {
        var configuration = PostgresConfiguration(host: "db", user: "o'brien", password: "a b'c\\d=e", database: "x y")
        configuration.statementTimeout = .milliseconds(1500)
        let parameters = Dictionary(configuration.connectionParameters(), uniquingKeysWith: { first, _ in first })
        #expect(parameters["password"] == "a b'c\\d=e")
        #expect(parameters["user"] == "o'brien")
        #expect(parameters["dbname"] == "x y")
        #expect(parameters["client_encoding"] == "UTF8")
        #expect(parameters["options"]?.contains("-c TimeZone=UTC") == true)
        #expect(parameters["options"]?.contains("-c statement_timeout=1500") == true)
    }

    @Test(arguments: [
        "mysql://user@host/db",
        "postgres//host/db",
        "postgres://host:99999/db",
        "postgres://host:0/db",
        "postgres://host:abc/db",
        "postgres://us%zzer@host/db",
        "postgres://user@host/db%",
        "postgres://user@host/db?sslmode=sometimes",
        "postgres://user@host/db?frobnicate=1",
        "postgres://user@host/db?pool_size=0",
        "postgres://user@host/db?novalue",
        "postgres://user@h1,,h2/db",
        "postgres://user@host/db?target_session_attrs=sometimes&frob=1",
        "postgres://user@[::1/db",
        "postgres://user@host/a/b",
        "postgres://user@host/db#fragment",
        "postgres://user%00@host/db",
        "postgres://user@host/%ff%fe",
    ])
    func rejectsBadURLs(url: String) {
        let error = #expect(throws: PostgresError.self) { try PostgresConfiguration(url: url) }
        #expect(error?.code == .invalidConfiguration)
    }

    /// Several hosts and any libpq keyword go to libpq as they are.
    @Test func passesSeveralHostsAndLibpqKeywordsThrough() throws {
        let cluster = try PostgresConfiguration(
            url: "postgresql://app:pw@h1:5432,[::1]:5433,h3/herald?target_session_attrs=read-write&gssencmode=disable&pool_size=3")
        #expect(cluster.host == "h1,::1,h3")
        #expect(cluster.poolSize == 3 && cluster.parameters["pool_size"] == nil)
        let parameters = Dictionary(cluster.connectionParameters(), uniquingKeysWith: { _, last in last })
        #expect(parameters["host"] == "h1,::1,h3")
        #expect(parameters["port"] == "5432,5433,")
        #expect(parameters["target_session_attrs"] == "read-write" && parameters["gssencmode"] == "disable")
        #expect(cluster.connectionParameters().filter { $0.0 == "port" }.count == 1, "one port keyword")
        #expect(cluster.description.contains("h1,[::1],h3") && cluster.description.contains("target_session_attrs=read-write"))

        let query = try PostgresConfiguration(url: "postgres://app@/herald?host=h1,h2&port=5432,6432&options=-c%20work_mem%3D8MB")
        let queried = Dictionary(query.connectionParameters(), uniquingKeysWith: { _, last in last })
        #expect(queried["host"] == "h1,h2" && queried["port"] == "5432,6432")
        #expect(queried["options"]?.hasPrefix("-c work_mem=8MB -c TimeZone=UTC") == true)
    }

    @Test func libpqsOwnCheckNamesAnUnknownKeywordWithoutThePassword() {
        let error = #expect(throws: PostgresError.self) { try PostgresConfiguration(url: "postgres://u:hunter2@host/db?frobnicate=1") }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.description.contains("frobnicate") == true, "\(String(describing: error))")
        #expect(error?.description.contains("hunter2") == false)
    }

    @Test func badURLErrorDoesNotLeakThePassword() {
        do {
            _ = try PostgresConfiguration(url: "postgres://u:hunter2@host:notaport/db")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(!error.description.contains("hunter2"))
            #expect(!error.debugDescription.contains("hunter2"))
        }
    }

    @Test func clientRejectsAnInvalidPoolSize() {
        var configuration = PostgresConfiguration()
        configuration.poolSize = 0
        #expect(throws: PostgresError.self) { try PostgresClient(configuration: configuration) }
    }
}
