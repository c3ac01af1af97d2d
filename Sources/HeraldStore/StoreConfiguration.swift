import HeraldPostgres

/// How to reach the database and how long things are kept. The `herald` executable builds it
/// from its configuration; libraries never read the environment.
public struct StoreConfiguration: Sendable {
    /// Where PostgreSQL is, and the pool size (``HeraldPostgres/PostgresConfiguration/poolSize``).
    public var database: PostgresConfiguration
    /// How long an event dedupe key is remembered.
    public var dedupeRetention: Duration
    /// How long a sent notification stays fetchable by position.
    public var notificationLogRetention: Duration
    /// How long the journal remembers a delivery; a message redelivered later than this is sent
    /// again.
    public var deliveryRetention: Duration
    /// The most users the ``SubscriptionCache`` holds.
    public var subscriptionCacheCapacity: Int
    /// The last step of template culture fallback.
    public var defaultCulture: String
    /// How often ``Store/start()``'s maintenance deletes expired rows; `nil` never (call
    /// ``Store/expire(limit:)`` yourself).
    public var maintenanceInterval: Duration?

    public init(database: PostgresConfiguration) {
        self.database = database
        self.dedupeRetention = .seconds(7 * 86_400)
        self.notificationLogRetention = .seconds(30 * 86_400)
        self.deliveryRetention = .seconds(14 * 86_400)
        self.subscriptionCacheCapacity = 100_000
        self.defaultCulture = "ru-RU"
        self.maintenanceInterval = .seconds(600)
    }

    /// - Throws: ``StoreError/Code/invalidConfiguration`` for a malformed URL.
    public init(databaseURL: String, poolSize: Int = 4) throws(StoreError) {
        var database: PostgresConfiguration
        do {
            database = try PostgresConfiguration(url: databaseURL)
        } catch {
            throw StoreError(error, operation: "StoreConfiguration")
        }
        database.poolSize = poolSize
        self.init(database: database)
    }

    func validate() throws(StoreError) {
        func fail(_ message: String) -> StoreError {
            StoreError(code: .invalidConfiguration, message: message, operation: "StoreConfiguration")
        }
        for (name, value) in [
            ("dedupeRetention", dedupeRetention), ("notificationLogRetention", notificationLogRetention),
            ("deliveryRetention", deliveryRetention),
        ] where value < .seconds(1) {
            throw fail("\(name) must be at least one second")
        }
        guard subscriptionCacheCapacity >= 2 else { throw fail("subscriptionCacheCapacity must be at least 2") }
        guard !defaultCulture.isEmpty else { throw fail("defaultCulture must not be empty") }
        if let maintenanceInterval, maintenanceInterval < .seconds(1) { throw fail("maintenanceInterval must be at least one second") }
    }
}
