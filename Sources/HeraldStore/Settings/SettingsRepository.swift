import Foundation
import HeraldPostgres

/// Per-user settings: pushes on or off, muted tags. Applied to every subscription of the user
/// (``DeviceRepository/subscriptions(forUsers:)``). A change notifies `herald_devices` with
/// the user id (a trigger), so caches drop the user's subscriptions.
///
/// Each call is one statement. Safe from any number of tasks. Throws ``StoreError``.
public struct SettingsRepository: Sendable {
    let client: PostgresClient

    /// The user's settings, or the defaults (pushes on, nothing muted) if never set.
    public func settings(forUser userId: String) async throws(StoreError) -> UserSettings {
        try await StoreError.wrap("SettingsRepository.settings") {
            let rows = try await client.query(
                "SELECT user_id, pushes_enabled, muted_tags, updated_at FROM user_settings WHERE user_id = $1", [userId]
            )
            guard let row = rows.first else { return UserSettings(userId: userId) }
            return try Self.settings(from: row)
        }
    }

    /// Changes the given fields (`nil` leaves one as it is) and returns the result.
    @discardableResult
    public func update(userId: String, pushesEnabled: Bool? = nil, mutedTags: Set<String>? = nil) async throws(StoreError) -> UserSettings {
        try await StoreError.wrap("SettingsRepository.update") {
            let rows = try await client.query(
                """
                INSERT INTO user_settings AS s (user_id, pushes_enabled, muted_tags)
                VALUES ($1, coalesce($2, true), coalesce($3, '{}'::text[]))
                ON CONFLICT (user_id) DO UPDATE SET
                    pushes_enabled = coalesce($2, s.pushes_enabled), muted_tags = coalesce($3, s.muted_tags), updated_at = now()
                RETURNING user_id, pushes_enabled, muted_tags, updated_at
                """,
                [userId, pushesEnabled, mutedTags.map(DeviceRepository.storedTags)]
            )
            guard let row = rows.first else {
                throw StoreError(code: .database, message: "the upsert returned no row")
            }
            return try Self.settings(from: row)
        }
    }

    private static func settings(from row: PostgresRow) throws(PostgresError) -> UserSettings {
        UserSettings(
            userId: try row.decode(String.self, column: "user_id"),
            pushesEnabled: try row.decode(Bool.self, column: "pushes_enabled"),
            mutedTags: Set(try row.decode([String].self, column: "muted_tags")),
            updatedAt: try row.decode(Date.self, column: "updated_at")
        )
    }
}
