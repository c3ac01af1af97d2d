/// A service the integration tests run against, at the URL ``TestEnvironment`` gives it.
public enum TestService: String, Sendable, CaseIterable {
    case rabbitMQ = "RabbitMQ"
    case postgreSQL = "PostgreSQL"

    /// `HERALD_TEST_AMQP_URL` or `HERALD_TEST_DATABASE_URL` (with their defaults).
    public var url: String {
        switch self {
        case .rabbitMQ: TestEnvironment.amqpURL
        case .postgreSQL: TestEnvironment.databaseURL
        }
    }

    var defaultPort: Int {
        switch self {
        case .rabbitMQ: 5672
        case .postgreSQL: 5432
        }
    }
}
