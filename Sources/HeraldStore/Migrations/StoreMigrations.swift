import HeraldPostgres

/// The schema's numbered migrations, embedded in the binary (SwiftPM `.embedInCode` resources:
/// `Migrations/NNNN_name.sql` becomes `PackageResources._NNN_name_sql`, the leading digit
/// mangled to `_`). To change the schema, add a file, list it in `Package.swift`'s resources
/// and here; never edit a migration that has shipped.
enum StoreMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "initial", sql: String(decoding: PackageResources._001_initial_sql, as: UTF8.self)),
        Migration(version: 2, name: "journal", sql: String(decoding: PackageResources._002_journal_sql, as: UTF8.self)),
        Migration(version: 3, name: "support", sql: String(decoding: PackageResources._003_support_sql, as: UTF8.self)),
        Migration(version: 4, name: "journal message index", sql: String(decoding: PackageResources._004_journal_message_index_sql, as: UTF8.self)),
        Migration(version: 5, name: "shared payloads", sql: String(decoding: PackageResources._005_shared_payloads_sql, as: UTF8.self)),
        Migration(
            version: 6, name: "device positions fillfactor", sql: String(decoding: PackageResources._006_device_positions_fillfactor_sql, as: UTF8.self)),
        Migration(version: 7, name: "event android channel", sql: String(decoding: PackageResources._007_event_android_channel_sql, as: UTF8.self)),
        Migration(version: 8, name: "backlog", sql: String(decoding: PackageResources._008_backlog_sql, as: UTF8.self)),
        Migration(version: 9, name: "backlog holder", sql: String(decoding: PackageResources._009_backlog_holder_sql, as: UTF8.self)),
        Migration(version: 10, name: "broadcasts", sql: String(decoding: PackageResources._010_broadcasts_sql, as: UTF8.self)),
    ]
}
