import HeraldCore
import HeraldPostgres
import Logging
import Synchronization

/// HeraldStore's entry point: owns the database client, and exposes the repositories, the
/// caches and the migrations.
///
/// Lifecycle: create it (no I/O), ``migrate()`` where the process is allowed to (`herald
/// migrate`), ``start()`` to listen for changes (the caches keep entries only while listening)
/// and run retention maintenance, ``stop()`` to stop that, ``close()`` at the end.
///
/// Thread rules: every member is `Sendable` and safe from any number of tasks. Statements run
/// on HeraldPostgres' connection threads, never on the cooperative pool. Each repository call
/// is one statement (its own transaction) unless its documentation says it uses a transaction.
/// Everything throws ``StoreError``.
public final class Store: Sendable {
    public let configuration: StoreConfiguration
    public let devices: DeviceRepository
    public let settings: SettingsRepository
    public let templates: TemplateRepository
    public let journal: DeliveryJournal
    public let backlog: DeliveryBacklog
    /// Broadcasts sent in windows.
    public let broadcasts: BroadcastRepository
    public let notificationLog: NotificationLogRepository
    public let deadLetters: DeadLetterRepository
    /// Support answers: what became of a message, a user's deliveries.
    public let lookup: DeliveryLookup
    public let templateCache: TemplateCache
    public let subscriptionCache: SubscriptionCache
    public let changeListener: StoreChangeListener

    let client: PostgresClient
    private let logger: Logger
    private let background = Mutex<Task<Void, Never>?>(nil)

    /// The schema's migrations, in order.
    public static var migrations: [Migration] { StoreMigrations.all }

    /// - Throws: ``StoreError/Code/invalidConfiguration``.
    public init(configuration: StoreConfiguration, logger: Logger = Logger(label: "herald.store")) throws(StoreError) {
        try configuration.validate()
        let client: PostgresClient
        do {
            client = try PostgresClient(configuration: configuration.database, logger: logger)
        } catch {
            throw StoreError(error, operation: "Store.init")
        }
        self.configuration = configuration
        self.client = client
        self.logger = logger
        let devices = DeviceRepository(client: client)
        let templates = TemplateRepository(client: client)
        self.devices = devices
        self.templates = templates
        self.settings = SettingsRepository(client: client)
        self.journal = DeliveryJournal(
            client: client, logRetention: configuration.notificationLogRetention, retention: configuration.deliveryRetention,
            dedupeRetention: configuration.dedupeRetention
        )
        self.backlog = DeliveryBacklog(client: client)
        self.broadcasts = BroadcastRepository(client: client)
        self.notificationLog = NotificationLogRepository(client: client, retention: configuration.notificationLogRetention)
        self.deadLetters = DeadLetterRepository(client: client)
        self.lookup = DeliveryLookup(client: client)
        let defaultCulture = configuration.defaultCulture
        self.templateCache = TemplateCache { () async throws(StoreError) in try await templates.catalog(defaultCulture: defaultCulture) }
        self.subscriptionCache = SubscriptionCache(capacity: configuration.subscriptionCacheCapacity) { (users) async throws(StoreError) in
            try await devices.subscriptions(forUsers: users)
        }
        self.changeListener = StoreChangeListener(
            client: client, templates: templateCache, subscriptions: subscriptionCache, logger: logger
        )
    }

    /// A backlog lock of this store's database (``BacklogLock``), not yet taken; its session is
    /// its own.
    public func makeBacklogLock() -> BacklogLock {
        BacklogLock(client: client)
    }

    /// Applies the migrations the database lacks (safe from several processes at once) and
    /// returns their versions.
    /// - Throws: ``StoreError/Code/schemaMismatch`` when an applied migration was edited or one
    ///   fails, or a connection error.
    @discardableResult
    public func migrate() async throws(StoreError) -> [Int] {
        try await StoreError.wrap("Store.migrate") {
            let runner = try MigrationRunner(migrations: Self.migrations, logger: logger)
            return try await runner.migrate(on: client).map(\.version)
        }
    }

    /// Checks that the database answers and has every migration of this release.
    /// - Throws: ``StoreError/Code/unavailable``, or ``StoreError/Code/schemaMismatch`` when
    ///   migrations are missing.
    public func checkHealth() async throws(StoreError) {
        try await StoreError.wrap("Store.checkHealth") {
            let runner = try MigrationRunner(migrations: Self.migrations, logger: logger)
            let applied = Set(try await runner.appliedMigrations(on: client).map(\.version))
            let missing = Self.migrations.map(\.version).filter { !applied.contains($0) }
            guard missing.isEmpty else {
                throw StoreError(code: .schemaMismatch, message: "migrations \(missing) are not applied (run `herald migrate`)")
            }
        }
    }

    /// Starts listening for changes (``changeListener``) and, if configured, the periodic
    /// retention maintenance, in a background task. Calling it again while started does
    /// nothing.
    public func start() {
        background.withLock { task in
            guard task == nil else { return }
            task = Task { [self] in
                await withDiscardingTaskGroup { group in
                    group.addTask { await self.changeListener.run() }
                    if let interval = configuration.maintenanceInterval {
                        group.addTask { await self.maintain(every: interval) }
                    }
                }
            }
        }
    }

    /// Stops what ``start()`` started and waits for it; the caches stop keeping entries.
    public func stop() async {
        let task = background.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
    }

    /// Stops, then closes the database client; later calls throw ``StoreError/Code/closed``.
    public func close() async {
        await stop()
        await client.close()
    }

    /// How many rows ``expire(limit:)`` deleted.
    public struct ExpiredRows: Sendable, Hashable {
        /// Journal rows (deliveries, which are also the notification-log entries).
        public var deliveries: Int
        /// Message rows (which also hold the AvoidDublication keys).
        public var messages: Int
    }

    /// Deletes expired journal rows and messages, at most `limit` of each per call.
    @discardableResult
    public func expire(limit: Int = 10_000) async throws(StoreError) -> ExpiredRows {
        let expired = try await journal.expire(limit: limit)
        return ExpiredRows(deliveries: expired.deliveries, messages: expired.messages)
    }

    private func maintain(every interval: Duration) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            do {
                // Slices of at most `slice` rows per table, until a slice comes back short.
                let slice = 10_000
                while !Task.isCancelled {
                    let expired = try await expire(limit: slice)
                    if max(expired.deliveries, expired.messages) < slice { break }
                }
            } catch {
                logger.warning("Retention maintenance failed; trying again later", metadata: [LogKey.error: "\(error)"])
            }
        }
    }
}
