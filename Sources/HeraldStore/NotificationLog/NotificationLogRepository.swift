import Foundation
import HeraldCore
import HeraldPostgres

/// The per-device log of sent notifications, by position, written by
/// ``DeliveryJournal/record(_:)`` and read by `/v1/devices/{id}/notifications?after=N`.
/// Entries live for the configured log retention. Safe from any number of tasks. Throws
/// ``StoreError``.
public struct NotificationLogRepository: Sendable {
    let client: PostgresClient

    init(client: PostgresClient) {
        self.client = client
    }

    /// Entries of a device with a position greater than `after`, oldest first, at most `limit`.
    /// Positions of deliveries that failed or are still in flight are absent. With
    /// `visibleTo`, only the entries addressed to that user or broadcast (user `"0"`): on a
    /// device shared by two users, neither reads the other's notifications through the API.
    public func entries(
        deviceId: String, app: String? = nil, after position: Int, limit: Int = 100, visibleTo userId: String? = nil
    ) async throws(StoreError) -> [NotificationLogEntry] {
        try await StoreError.wrap("NotificationLogRepository.entries") {
            let rows = try await client.query(
                """
                SELECT l.position, l.delivery_key, l.user_id, l.event_id, l.payload, l.created_at
                FROM notification_log l JOIN devices d ON d.id = l.device_ref
                WHERE d.app = $1 AND d.device_id = $2 AND l.position > $3 AND l.expires_at > now()
                  AND ($5::text IS NULL OR l.user_id IN ($5, '0'))
                ORDER BY l.position
                LIMIT $4
                """,
                [app ?? DeviceRepository.defaultApp, deviceId, position, limit, userId]
            )
            return try rows.map { (row) throws(PostgresError) in
                NotificationLogEntry(
                    position: try row.decode(Int.self, column: "position"),
                    deliveryKey: DeliveryKey(rawValue: try row.decode(String.self, column: "delivery_key")),
                    userId: try row.decode(String.self, column: "user_id"),
                    eventId: try row.decode(String?.self, column: "event_id"),
                    payload: try row.decode(String.self, column: "payload"),
                    createdAt: try row.decode(Date.self, column: "created_at")
                )
            }
        }
    }

    /// How many entries of a device have a position greater than `after` (with `visibleTo`, as
    /// for ``entries(deviceId:app:after:limit:visibleTo:)``).
    public func count(deviceId: String, app: String? = nil, after position: Int, visibleTo userId: String? = nil) async throws(StoreError) -> Int {
        try await StoreError.wrap("NotificationLogRepository.count") {
            let rows = try await client.query(
                """
                SELECT count(*) FROM notification_log l JOIN devices d ON d.id = l.device_ref
                WHERE d.app = $1 AND d.device_id = $2 AND l.position > $3 AND l.expires_at > now()
                  AND ($4::text IS NULL OR l.user_id IN ($4, '0'))
                """,
                [app ?? DeviceRepository.defaultApp, deviceId, position, userId]
            )
            return try rows.first?.decode(Int.self, at: 0) ?? 0
        }
    }

    /// Deletes expired entries, at most `limit` per call; returns how many.
    @discardableResult
    public func expire(limit: Int = 10_000) async throws(StoreError) -> Int {
        try await StoreError.wrap("NotificationLogRepository.expire") {
            try await client.execute(
                """
                DELETE FROM notification_log WHERE (device_ref, position) IN (
                    SELECT device_ref, position FROM notification_log WHERE expires_at <= now() LIMIT $1)
                """,
                [limit]
            )
        }
    }
}
