import Foundation
import HeraldCore
import HeraldPostgres

/// What a user has read on a device, and how many pushes are left unread (the app badge,
/// seed 000 requirement 8).
public struct ReadState: Sendable, Hashable {
    /// The last position the user reported as read on the device (reads only move forward).
    public var position: Int
    /// Pushes sent to the device for the user (or broadcast) after it.
    public var unread: Int
}

/// A read reported on a device: the state after it, and the read position before it (what
/// `api.badge_sync` propagates is what lies between).
public struct ReadMove: Sendable, Hashable {
    public var state: ReadState
    /// 0 when the user had never reported a read on the device.
    public var previousPosition: Int
}

extension DeviceRepository {
    /// The unread count of a read answer: the pushes sent to the device after the read
    /// position, to the user (`$3` in every statement here) or to everyone. One rule for
    /// ``markRead(deviceId:app:userId:position:)``, ``readState(deviceId:app:userId:)`` and
    /// ``propagateRead(deviceId:app:userId:after:upTo:)``.
    static func unreadSQL(deviceRef: String, after: String) -> String {
        "(SELECT count(*) FROM journal j WHERE j.device_ref = \(deviceRef) AND j.position > \(after) AND j.user_id IN ($3, '0') AND j.state = 'sent')"
    }

    /// Records that `userId` has read the device's notifications up to `position` (a smaller
    /// position than the one stored changes nothing) and answers what is left unread and where
    /// the read position was before, in one statement (the previous position is the statement's
    /// snapshot: of two reads at once, the later may report the same previous position as the
    /// earlier, and badge sync then propagates their overlap twice, which moves nothing twice).
    /// The worker reads these positions in its claim to put the unread count on each push. `nil`
    /// when the device does not exist.
    public func markRead(deviceId: String, app: String? = nil, userId: String, position: Int) async throws(StoreError) -> ReadMove? {
        try await StoreError.wrap("DeviceRepository.markRead") {
            let rows = try await client.query(
                """
                WITH dev AS (SELECT id FROM devices WHERE app = $1 AND device_id = $2),
                before AS (SELECT r.position FROM device_reads r JOIN dev ON r.device_ref = dev.id WHERE r.user_id = $3),
                up AS (
                    INSERT INTO device_reads (device_ref, user_id, position)
                    SELECT id, $3, $4 FROM dev
                    ON CONFLICT (device_ref, user_id) DO UPDATE SET position = greatest(device_reads.position, EXCLUDED.position), read_at = now()
                    RETURNING device_ref, position
                )
                SELECT up.position, \(Self.unreadSQL(deviceRef: "up.device_ref", after: "up.position")),
                    coalesce((SELECT position FROM before), 0)
                FROM up
                """,
                [app ?? Self.defaultApp, deviceId, userId, position]
            )
            guard let row = rows.first else { return nil }
            return ReadMove(
                state: ReadState(position: try row.decode(Int.self, at: 0), unread: try row.decode(Int.self, at: 1)),
                previousPosition: try row.decode(Int.self, at: 2)
            )
        }
    }

    /// The read state of `userId` on the device (position 0 when it never reported one); `nil`
    /// when the device does not exist.
    public func readState(deviceId: String, app: String? = nil, userId: String) async throws(StoreError) -> ReadState? {
        try await StoreError.wrap("DeviceRepository.readState") {
            let rows = try await client.query(
                """
                SELECT coalesce(r.position, 0), \(Self.unreadSQL(deviceRef: "d.id", after: "coalesce(r.position, 0)"))
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

/// Another device of a user whose read position a read elsewhere moved (``DeviceRepository/propagateRead(deviceId:app:userId:after:upTo:)``).
public struct PropagatedRead: Sendable, Hashable {
    public var deviceId: String
    /// `nil` for the default app (``DeviceRepository/app(fromStored:)``), as in ``Subscription``.
    public var app: String?
    public var platform: Platform
    public var token: String
    public var state: ReadState
}

extension DeviceRepository {
    /// The user read, on one device, the notifications in positions `after+1 … upTo`: the same
    /// notifications (the same messages) are read on the user's other devices too. Moves their
    /// read positions forward to the last of those messages there, and answers the devices with
    /// a working token whose position moved, with their unread counts (to send them a badge
    /// update). For `api.badge_sync`; off the hot path.
    public func propagateRead(deviceId: String, app: String? = nil, userId: String, after: Int, upTo: Int) async throws(StoreError) -> [PropagatedRead] {
        guard upTo > after else { return [] }
        return try await StoreError.wrap("DeviceRepository.propagateRead") {
            let rows = try await client.query(
                """
                WITH src AS (SELECT id FROM devices WHERE app = $1 AND device_id = $2),
                read AS (
                    SELECT DISTINCT j.message_id FROM journal j JOIN src ON j.device_ref = src.id
                    WHERE j.position > $4 AND j.position <= $5 AND j.user_id IN ($3, '0') AND j.message_id <> 0
                ),
                other AS (
                    SELECT j.device_ref, max(j.position) AS position
                    FROM journal j JOIN read r ON r.message_id = j.message_id
                    JOIN device_users du ON du.device_ref = j.device_ref AND du.user_id = $3
                    WHERE j.device_ref NOT IN (SELECT id FROM src) AND j.user_id IN ($3, '0')
                    GROUP BY j.device_ref
                ),
                up AS (
                    INSERT INTO device_reads (device_ref, user_id, position) SELECT device_ref, $3, position FROM other
                    ON CONFLICT (device_ref, user_id) DO UPDATE SET position = greatest(device_reads.position, EXCLUDED.position), read_at = now()
                    WHERE device_reads.position < EXCLUDED.position
                    RETURNING device_ref, position
                )
                SELECT d.device_id, d.app, d.platform, d.token, up.position, \(Self.unreadSQL(deviceRef: "up.device_ref", after: "up.position")) AS unread
                FROM up JOIN devices d ON d.id = up.device_ref
                WHERE d.token IS NOT NULL AND d.token_state = 'active'
                ORDER BY d.app, d.device_id
                """,
                [app ?? Self.defaultApp, deviceId, userId, after, upTo]
            )
            return try rows.compactMap { (row) throws(PostgresError) -> PropagatedRead? in
                guard let platform = Platform(rawValue: try row.decode(String.self, at: 2)) else { return nil }
                return PropagatedRead(
                    deviceId: try row.decode(String.self, at: 0), app: Self.app(fromStored: try row.decode(String.self, at: 1)), platform: platform,
                    token: try row.decode(String.self, at: 3),
                    state: ReadState(position: try row.decode(Int.self, at: 4), unread: try row.decode(Int.self, at: 5))
                )
            }
        }
    }
}
