import Foundation
import HeraldPostgres

/// What a user has read on a device, and how many pushes are left unread (the app badge,
/// seed 000 requirement 8).
public struct ReadState: Sendable, Hashable {
    /// The last position the user reported as read on the device (reads only move forward).
    public var position: Int
    /// Pushes sent to the device for the user (or broadcast) after it.
    public var unread: Int

    public init(position: Int, unread: Int) {
        self.position = position
        self.unread = unread
    }
}

extension DeviceRepository {
    /// Records that `userId` has read the device's notifications up to `position` (a smaller
    /// position than the one stored changes nothing) and answers what is left unread. The
    /// worker reads these positions in its claim to put the unread count on each push.
    /// `nil` when the device does not exist.
    public func markRead(deviceId: String, app: String? = nil, userId: String, position: Int) async throws(StoreError) -> ReadState? {
        try await StoreError.wrap("DeviceRepository.markRead") {
            let rows = try await client.query(
                """
                WITH up AS (
                    INSERT INTO device_reads (device_ref, user_id, position)
                    SELECT id, $3, $4 FROM devices WHERE app = $1 AND device_id = $2
                    ON CONFLICT (device_ref, user_id) DO UPDATE SET position = greatest(device_reads.position, EXCLUDED.position), read_at = now()
                    RETURNING device_ref, position
                )
                SELECT up.position, (
                    SELECT count(*) FROM journal j
                    WHERE j.device_ref = up.device_ref AND j.position > up.position AND j.user_id IN ($3, '0') AND j.state = 'sent'
                ) FROM up
                """,
                [app ?? Self.defaultApp, deviceId, userId, position]
            )
            guard let row = rows.first else { return nil }
            return ReadState(position: try row.decode(Int.self, at: 0), unread: try row.decode(Int.self, at: 1))
        }
    }

    /// The read state of `userId` on the device (position 0 when it never reported one); `nil`
    /// when the device does not exist.
    public func readState(deviceId: String, app: String? = nil, userId: String) async throws(StoreError) -> ReadState? {
        try await StoreError.wrap("DeviceRepository.readState") {
            let rows = try await client.query(
                """
                SELECT coalesce(r.position, 0), (
                    SELECT count(*) FROM journal j
                    WHERE j.device_ref = d.id AND j.position > coalesce(r.position, 0) AND j.user_id IN ($3, '0') AND j.state = 'sent'
                )
                FROM devices d LEFT JOIN device_reads r ON r.device_ref = d.id AND r.user_id = $3
                WHERE d.app = $1 AND d.device_id = $2
                """,
                [app ?? Self.defaultApp, deviceId, userId]
            )
            guard let row = rows.first else { return nil }
            return ReadState(position: try row.decode(Int.self, at: 0), unread: try row.decode(Int.self, at: 1))
        }
    }
}
