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
        let (settings, logger) = try global.settings(database, logger: "herald.migrate")
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
