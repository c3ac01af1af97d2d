import Foundation
import HeraldCore
import HeraldPostgres

/// The per-device log of sent notifications, by position (seed 002): the journal's `sent` rows,
/// read by `/v1/devices/{id}/notifications?after=N`. Entries stay fetchable for the configured
/// notification-log retention. Safe from any number of tasks. Throws ``StoreError``.
public struct NotificationLogRepository: Sendable {
    let client: PostgresClient
    let retention: Duration

    /// Whether journal row `j` is a log entry: sent, with its body (rows migrated from version 1
    /// may have none) in the row or shared by its message (``SharedPayloads``).
    static let isEntrySQL = "j.state = 'sent' AND (j.payload IS NOT NULL OR j.payload_digest IS NOT NULL)"
    /// The body of journal row `j`.
    static let payloadSQL = """
        coalesce(j.payload, (SELECT s.payload FROM message_payloads s WHERE s.message_id = j.message_id AND s.digest = j.payload_digest))
        """

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
                SELECT j.position, j.user_id, coalesce(j.event_id, m.event_id) AS event_id, \(Self.payloadSQL) AS payload, j.recorded_at, j.collapse_id, \(MessageKey.textSQL) AS key_text
                FROM devices d JOIN journal j ON j.device_ref = d.id LEFT JOIN messages m ON m.id = j.message_id
                WHERE d.app = $1 AND d.device_id = $2 AND j.position > $3 AND \(Self.isEntrySQL)
                  AND j.recorded_at > now() - make_interval(secs => $6)
                  AND ($5::text IS NULL OR j.user_id IN ($5, '0'))
                ORDER BY j.position
                LIMIT $4
                """,
                [app ?? DeviceRepository.defaultApp, deviceId, position, limit, userId, Int(retention.components.seconds)]
            )
            return try rows.map { (row) throws(PostgresError) in
                let userId = try row.decode(String.self, column: "user_id")
                let collapseId = try row.decode(String?.self, column: "collapse_id")
                let messageKey = try row.decode(String?.self, column: "key_text") ?? ""
                let key = collapseId.map(DeliveryKey.init(rawValue:)) ?? DeliveryKey(messageKey: messageKey, deviceId: deviceId, userId: userId, app: app)
                return NotificationLogEntry(
                    position: try row.decode(Int.self, column: "position"),
                    deliveryKey: key,
                    userId: userId,
                    eventId: try row.decode(String?.self, column: "event_id"),
                    payload: try row.decode(String.self, column: "payload"),
                    createdAt: try row.decode(Date.self, column: "recorded_at")
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
                SELECT count(*) FROM devices d JOIN journal j ON j.device_ref = d.id
                WHERE d.app = $1 AND d.device_id = $2 AND j.position > $3 AND \(Self.isEntrySQL)
                  AND j.recorded_at > now() - make_interval(secs => $5)
                  AND ($4::text IS NULL OR j.user_id IN ($4, '0'))
                """,
                [app ?? DeviceRepository.defaultApp, deviceId, position, userId, Int(retention.components.seconds)]
            )
            return try rows.first?.decode(Int.self, at: 0) ?? 0
        }
    }
}
