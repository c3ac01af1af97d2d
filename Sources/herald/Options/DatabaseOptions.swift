import ArgumentParser

/// `--database-url` for the commands that only need the database (migrate, templates, devices).
struct DatabaseOptions: ParsableArguments, SettingFlags {
    @Option(help: "PostgreSQL URL (database.url, HERALD_DATABASE_URL).")
    var databaseURL: String?

    func apply(to settings: inout Settings) {
        settings.set(.databaseURL, flag: databaseURL)
    }
}
