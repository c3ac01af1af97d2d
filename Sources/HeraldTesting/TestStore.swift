import HeraldPostgres
import HeraldStore

/// A ``HeraldStore/Store`` on a fresh database (migrated unless told not to), without its
/// maintenance loop and not started (no change listener), closed afterwards: the store set-up
/// the test targets share.
public enum TestStore {
    public static func with<T>(
        migrate: Bool = true,
        configure: (inout StoreConfiguration) -> Void = { _ in },
        _ body: (Store, TestDatabase) async throws -> T
    ) async throws -> T {
        try await TestDatabase.with { _, database in
            var configuration = StoreConfiguration(database: database.configuration)
            configuration.maintenanceInterval = nil
            configuration.database.reconnectInitialDelay = .milliseconds(50)
            configure(&configuration)
            let store = try Store(configuration: configuration)
            do {
                if migrate { try await store.migrate() }
                let result = try await body(store, database)
                await store.close()
                return result
            } catch {
                await store.close()
                throw error
            }
        }
    }
}
