import ArgumentParser
import HeraldPostgres
import HeraldStore

/// `herald migrate`: applies the database migrations this release needs (safe to run from
/// several hosts at once; already applied migrations are checked, never re-run).
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Create or update the database schema.")

    @OptionGroup var database: DatabaseOptions

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        var settings = try global.settings()
        database.apply(to: &settings)
        let logger = RuntimeSettings.logger("herald.migrate", settings: settings)
        do {
            let applied = try await RuntimeSettings.withStore(settings, logger: logger) { store in try await store.migrate() }
            let latest = Store.migrations.map(\.version).max() ?? 0
            Console.out(
                applied.isEmpty
                    ? "Schema is up to date (version \(latest))."
                    : "Applied migrations \(applied.map(String.init).joined(separator: ", ")); schema version \(latest).")
        } catch {
            Console.error("herald migrate: \(error)")
            throw ExitCode.failure
        }
    }
}
