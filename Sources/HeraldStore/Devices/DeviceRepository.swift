import Foundation
import HeraldCore
import HeraldPostgres

/// Devices, the users subscribed on them, and their tokens: what the REST API writes and the
/// worker reads (through ``SubscriptionCache``).
///
/// A device is identified by its hardware id within an app (`app: nil` is the default app,
/// stored as ``defaultApp``). A device has at most one token, which belongs to it alone:
/// giving a token to one device takes it away from any other device of the same app. Several
/// users may be subscribed on one device (seed 000's two wallets); whether a login moves a
/// device to another user is the caller's decision (``subscribe(_:replacingOtherUsers:)``).
///
/// Tags: a user on a device is subscribed to every tag or to a list; tags are stored
/// lowercase (ASCII). Unsubscribing from some tags removes them from the list, or, for
/// "every tag", excludes them (they appear in ``HeraldCore/Subscription/mutedTags``);
/// a user left with no tag is unsubscribed from the device.
///
/// Every change is one statement (so atomic) or one transaction, and notifies
/// `herald_devices` with the affected user ids through triggers, which invalidates the
/// ``SubscriptionCache``s of every process. Safe from any number of tasks. Throws
/// ``StoreError``.
public struct DeviceRepository: Sendable {
    /// How the default app (`app: nil`) is stored.
    public static let defaultApp = "default"

    let client: PostgresClient

    /// Registers a device and one user's subscription on it: creates or updates the device
    /// (platform, token, culture; a token sent again revives a dead one), takes the token away
    /// from other devices of the app, and sets the user's tags (replacing them), zone and
    /// branch. With `replacingOtherUsers`, the other users subscribed on the device are removed
    /// (a different user logged in on it).
    public func subscribe(_ registration: DeviceRegistration, replacingOtherUsers: Bool = false) async throws(StoreError) {
        let tags: [String]? = registration.tags.isEmpty ? nil : Self.storedTags(registration.tags)
        try await StoreError.wrap("DeviceRepository.subscribe") {
            try await client.execute(
                """
                WITH dev AS (
                    INSERT INTO devices (app, device_id, platform, token, culture) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (app, device_id) DO UPDATE SET
                        platform = EXCLUDED.platform, token = EXCLUDED.token, culture = EXCLUDED.culture,
                        token_state = 'active', token_dead_reason = NULL, token_dead_at = NULL, updated_at = now()
                    RETURNING id
                ),
                moved AS (
                    UPDATE devices SET token = NULL, updated_at = now()
                    WHERE $4::text IS NOT NULL AND app = $1 AND token = $4 AND id <> (SELECT id FROM dev)
                ),
                others AS (
                    DELETE FROM device_users WHERE $10 AND device_ref = (SELECT id FROM dev) AND user_id <> $6
                )
                INSERT INTO device_users (device_ref, user_id, tags, zone_id, branch_id)
                SELECT id, $6, $7, $8, $9 FROM dev
                ON CONFLICT (device_ref, user_id) DO UPDATE SET
                    tags = EXCLUDED.tags, excluded_tags = '{}', zone_id = EXCLUDED.zone_id, branch_id = EXCLUDED.branch_id,
                    subscribed_at = now()
                """,
                [
                    registration.app ?? Self.defaultApp, registration.deviceId, registration.platform.rawValue, registration.storedToken,
                    registration.culture, registration.userId, tags, registration.zoneId, registration.branchId, replacingOtherUsers,
                ]
            )
        }
    }

    /// Unsubscribes `userId` (or, with `nil`, every user) on a device from `tags`; with no
    /// tags, from everything (the user is removed from the device). Returns whether the device
    /// exists.
    @discardableResult
    public func unsubscribe(deviceId: String, app: String? = nil, userId: String? = nil, tags: Set<String> = []) async throws(StoreError) -> Bool {
        try await StoreError.wrap("DeviceRepository.unsubscribe") {
            let rows: PostgresQueryResult
            if tags.isEmpty {
                rows = try await client.query(
                    """
                    WITH dev AS (SELECT id FROM devices WHERE app = $1 AND device_id = $2),
                    removed AS (
                        DELETE FROM device_users WHERE device_ref IN (SELECT id FROM dev) AND ($3::text IS NULL OR user_id = $3)
                    )
                    SELECT count(*) FROM dev
                    """,
                    [app ?? Self.defaultApp, deviceId, userId]
                )
            } else {
                rows = try await client.query(
                    """
                    WITH dev AS (SELECT id FROM devices WHERE app = $1 AND device_id = $2),
                    removed AS (
                        DELETE FROM device_users
                        WHERE device_ref IN (SELECT id FROM dev) AND ($3::text IS NULL OR user_id = $3)
                          AND tags IS NOT NULL AND tags <@ $4::text[]
                    ),
                    changed AS (
                        UPDATE device_users SET
                            tags = CASE WHEN tags IS NULL THEN NULL
                                        ELSE ARRAY(SELECT t FROM unnest(tags) AS t WHERE t <> ALL ($4::text[]) ORDER BY t) END,
                            excluded_tags = CASE WHEN tags IS NULL
                                        THEN ARRAY(SELECT DISTINCT t FROM unnest(excluded_tags || $4::text[]) AS t ORDER BY t)
                                        ELSE excluded_tags END
                        WHERE device_ref IN (SELECT id FROM dev) AND ($3::text IS NULL OR user_id = $3)
                          AND (tags IS NULL OR NOT tags <@ $4::text[])
                    )
                    SELECT count(*) FROM dev
                    """,
                    [app ?? Self.defaultApp, deviceId, userId, Self.storedTags(tags)]
                )
            }
            return try rows.first?.decode(Int.self, at: 0) ?? 0 > 0
        }
    }

    /// Sets a device's token (a refresh: FCM `onTokenRefresh`, a new APNs token); `nil`, empty or
    /// `none` clears it. A new token is active and is taken away from other devices of the
    /// app. Returns whether the device exists.
    @discardableResult
    public func setToken(_ token: String?, deviceId: String, app: String? = nil) async throws(StoreError) -> Bool {
        try await StoreError.wrap("DeviceRepository.setToken") {
            let rows = try await client.query(
                """
                WITH dev AS (
                    UPDATE devices SET token = $3, token_state = 'active', token_dead_reason = NULL, token_dead_at = NULL, updated_at = now()
                    WHERE app = $1 AND device_id = $2
                    RETURNING id
                ),
                moved AS (
                    UPDATE devices SET token = NULL, updated_at = now()
                    WHERE $3::text IS NOT NULL AND app = $1 AND token = $3
                      AND EXISTS (SELECT 1 FROM dev) AND id NOT IN (SELECT id FROM dev)
                )
                SELECT count(*) FROM dev
                """,
                [app ?? Self.defaultApp, deviceId, Self.normalizedToken(token)]
            )
            return try rows.first?.decode(Int.self, at: 0) ?? 0 > 0
        }
    }

    /// Marks a device's token dead (the provider said it will never work again), but only if
    /// the device still has exactly this token and it is active: a token refreshed meanwhile is
    /// not killed by a late answer about the old one. Returns whether it was marked.
    @discardableResult
    public func markTokenDead(deviceId: String, app: String? = nil, token: String, reason: String) async throws(StoreError) -> Bool {
        try await StoreError.wrap("DeviceRepository.markTokenDead") {
            try await client.execute(
                """
                UPDATE devices SET token_state = 'dead', token_dead_reason = $4, token_dead_at = now(), updated_at = now()
                WHERE app = $1 AND device_id = $2 AND token = $3 AND token_state = 'active'
                """,
                [app ?? Self.defaultApp, deviceId, token, reason]
            ) > 0
        }
    }

    /// Sets the badge counter shown on the app icon. Returns whether the device exists.
    @discardableResult
    public func setBadge(_ badge: Int, deviceId: String, app: String? = nil) async throws(StoreError) -> Bool {
        try await StoreError.wrap("DeviceRepository.setBadge") {
            try await client.execute(
                "UPDATE devices SET badge = $3, updated_at = now() WHERE app = $1 AND device_id = $2",
                [app ?? Self.defaultApp, deviceId, badge]
            ) > 0
        }
    }

    /// Deletes a device, its users' subscriptions on it and its journal rows (its notification
    /// log). Its positions start again at 1 if it registers again. Returns whether it existed.
    @discardableResult
    public func delete(deviceId: String, app: String? = nil) async throws(StoreError) -> Bool {
        try await StoreError.wrap("DeviceRepository.delete") {
            let rows = try await client.query(
                """
                WITH dev AS (DELETE FROM devices WHERE app = $1 AND device_id = $2 RETURNING id),
                log AS (DELETE FROM journal WHERE device_ref IN (SELECT id FROM dev))
                SELECT count(*) FROM dev
                """,
                [app ?? Self.defaultApp, deviceId]
            )
            return try rows.first?.decode(Int.self, at: 0) ?? 0 > 0
        }
    }

    /// The store's id of a device (what the journal addresses it by), or `nil`.
    public func storeId(deviceId: String, app: String? = nil) async throws(StoreError) -> Int64? {
        try await StoreError.wrap("DeviceRepository.storeId") {
            let rows = try await client.query("SELECT id FROM devices WHERE app = $1 AND device_id = $2", [app ?? Self.defaultApp, deviceId])
            return try rows.first.map { Int64(try $0.decode(Int.self, at: 0)) }
        }
    }

    /// A device with its users, or `nil`.
    public func device(id deviceId: String, app: String? = nil) async throws(StoreError) -> Device? {
        try await StoreError.wrap("DeviceRepository.device") {
            let rows = try await client.query(
                Self.deviceSelect + " WHERE d.app = $1 AND d.device_id = $2 ORDER BY du.user_id",
                [app ?? Self.defaultApp, deviceId]
            )
            return try Self.devices(from: rows).first
        }
    }

    /// Devices ordered by app and device id, optionally only those `userId` is subscribed on
    /// (for `herald devices list` and the API).
    public func list(userId: String? = nil, limit: Int = 100, offset: Int = 0) async throws(StoreError) -> [Device] {
        try await StoreError.wrap("DeviceRepository.list") {
            let rows = try await client.query(
                """
                SELECT d.*, coalesce(p.next_position, 1) AS next_position, du.user_id, du.tags, du.excluded_tags, du.zone_id, du.branch_id,
                       du.subscribed_at
                FROM (
                    SELECT * FROM devices x
                    WHERE $1::text IS NULL OR EXISTS (SELECT 1 FROM device_users y WHERE y.device_ref = x.id AND y.user_id = $1)
                    ORDER BY x.app, x.device_id LIMIT $2 OFFSET $3
                ) d
                LEFT JOIN device_positions p ON p.device_ref = d.id
                LEFT JOIN device_users du ON du.device_ref = d.id
                ORDER BY d.app, d.device_id, du.user_id
                """,
                [userId, limit, offset]
            )
            return try Self.devices(from: rows)
        }
    }

    /// The subscriptions of `userIds` that can receive pushes: every device they are
    /// subscribed on that has an active token, with the users' settings applied
    /// (``HeraldCore/Subscription/isEnabled``, muted tags). One query for all users.
    public func subscriptions(forUsers userIds: [String]) async throws(StoreError) -> [Subscription] {
        guard !userIds.isEmpty else { return [] }
        return try await StoreError.wrap("DeviceRepository.subscriptions") {
            let rows = try await client.query(
                Self.subscriptionSelect + " WHERE du.user_id = ANY ($1::text[]) AND d.token IS NOT NULL AND d.token_state = 'active'",
                [userIds]
            )
            return try rows.map { (row) throws(PostgresError) in try Self.subscription(from: row) }
        }
    }

    /// Every subscription that can receive pushes, a page at a time, ordered by user (for a
    /// broadcast). Pages stay consistent while devices change: nothing is skipped or repeated
    /// that existed throughout.
    public func allSubscriptions(after cursor: SubscriptionPage.Cursor? = nil, limit: Int = 1000) async throws(StoreError) -> SubscriptionPage {
        try await StoreError.wrap("DeviceRepository.allSubscriptions") {
            // Two statements rather than "$1 IS NULL OR …", so that each page is a range of the
            // (user_id, device_ref) index: a page costs its own rows, not a sort of every row.
            let rows: PostgresQueryResult
            if let cursor {
                rows = try await client.query(
                    Self.subscriptionSelect + """
                         WHERE d.token IS NOT NULL AND d.token_state = 'active' AND (du.user_id, du.device_ref) > ($1, $2::bigint)
                         ORDER BY du.user_id, du.device_ref
                         LIMIT $3
                        """,
                    [cursor.userId, cursor.deviceRef, limit]
                )
            } else {
                rows = try await client.query(
                    Self.subscriptionSelect + """
                         WHERE d.token IS NOT NULL AND d.token_state = 'active'
                         ORDER BY du.user_id, du.device_ref
                         LIMIT $1
                        """,
                    [limit]
                )
            }
            var page = SubscriptionPage(subscriptions: [], next: nil)
            page.subscriptions.reserveCapacity(rows.count)
            for row in rows { page.subscriptions.append(try Self.subscription(from: row)) }
            if rows.count == limit, let last = rows.last {
                page.next = SubscriptionPage.Cursor(
                    userId: try last.decode(String.self, column: "user_id"), deviceRef: try last.decode(Int.self, column: "device_ref")
                )
            }
            return page
        }
    }

    /// PostgreSQL's estimate of the number of subscriptions (its statistics, kept by analyze:
    /// a bulk import analyzes the device tables); nil before the first. Costs nothing, unlike a
    /// count of millions of rows.
    public func estimatedSubscriptionCount() async throws(StoreError) -> Int? {
        try await StoreError.wrap("DeviceRepository.estimatedSubscriptionCount") {
            let rows = try await client.query("SELECT reltuples::int8 FROM pg_class WHERE oid = 'device_users'::regclass", [])
            guard let estimate = try rows.first?.decode(Int.self, at: 0), estimate >= 0 else { return nil }
            return estimate
        }
    }

    /// The subscriptions that can receive pushes of the next `limit` devices after device
    /// `cursor` (by ``Subscription/deviceRef``), whole devices, ordered by device and then user;
    /// `last` is the last device looked at (the next call's cursor), nil past the end. A
    /// broadcast's windows: each device falls in exactly one, and a window costs its own rows
    /// (ranges of the device_users primary key), whatever the audience.
    public func subscriptions(afterDevice cursor: Int64, devices limit: Int) async throws(StoreError) -> (subscriptions: [Subscription], last: Int64?) {
        try await StoreError.wrap("DeviceRepository.subscriptionsAfterDevice") {
            let bound = try await client.query(
                "SELECT max(device_ref) FROM (SELECT DISTINCT device_ref FROM device_users WHERE device_ref > $1 ORDER BY device_ref LIMIT $2) w",
                [Int(cursor), limit])
            guard let last = try bound.first?.decode(Int?.self, at: 0) else { return ([], nil) }
            let rows = try await client.query(
                Self.subscriptionSelect + """
                     WHERE du.device_ref > $1 AND du.device_ref <= $2 AND d.token IS NOT NULL AND d.token_state = 'active'
                     ORDER BY du.device_ref, du.user_id
                    """,
                [Int(cursor), last]
            )
            var subscriptions: [Subscription] = []
            subscriptions.reserveCapacity(rows.count)
            for row in rows { subscriptions.append(try Self.subscription(from: row)) }
            return (subscriptions, Int64(last))
        }
    }

    /// Imports registrations in bulk (`herald devices import`), in one transaction: each is
    /// applied as ``subscribe(_:replacingOtherUsers:)`` would, with the last row winning for a
    /// device's fields and for a token given to several devices. Sends one `*` (flush)
    /// notification instead of one per user. Returns how many user subscriptions were written.
    ///
    /// An import of ``bulkImportSize`` devices or more then analyzes the device tables: into a
    /// new installation, it would otherwise be planned from the statistics of nearly empty tables
    /// until autovacuum comes by, and each chunk's subscription read in the worker would hash
    /// every device instead of looking its users up, several times slower a chunk
    /// (docs/performance.md, "The device tables' statistics").
    @discardableResult
    public func importDevices(_ registrations: [DeviceRegistration], chunkSize: Int = 2000) async throws(StoreError) -> Int {
        guard !registrations.isEmpty else { return 0 }
        for registration in registrations {
            if registration.tags.contains(where: { $0.unicodeScalars.contains(Self.tagSeparator) }) {
                throw StoreError(code: .invalidData, message: "a tag contains the control character U+001F", operation: "DeviceRepository.importDevices")
            }
        }
        // Last row wins: for a device's fields, for a user on a device, and for a token.
        var deviceIndex: [DeviceKey: Int] = [:]
        var devices: [DeviceRegistration] = []
        var links: [LinkKey: DeviceRegistration] = [:]
        var linkOrder: [LinkKey] = []
        for registration in registrations {
            let key = DeviceKey(app: registration.app ?? Self.defaultApp, deviceId: registration.deviceId)
            if let index = deviceIndex[key] {
                devices[index] = registration
            } else {
                deviceIndex[key] = devices.count
                devices.append(registration)
            }
            let link = LinkKey(device: key, userId: registration.userId)
            if links.updateValue(registration, forKey: link) == nil { linkOrder.append(link) }
        }
        var tokenOwner: [String: Int] = [:]
        for (index, device) in devices.enumerated() {
            guard let token = device.storedToken else { continue }
            let key = "\(device.app ?? Self.defaultApp)\u{0}\(token)"
            if let previous = tokenOwner[key] { devices[previous].token = nil }
            tokenOwner[key] = index
        }
        let linkRows = linkOrder.map { links[$0]! }
        let imported = try await StoreError.wrap("DeviceRepository.importDevices") {
            try await client.withTransaction { transaction in
                try await transaction.execute("SELECT set_config('herald.defer_notify', 'on', true)")
                for start in stride(from: 0, to: devices.count, by: chunkSize) {
                    let chunk = devices[start..<min(start + chunkSize, devices.count)]
                    try await transaction.execute(
                        """
                        WITH input AS (
                            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
                                AS x(app, device_id, platform, token, culture)
                        ),
                        upserted AS (
                            INSERT INTO devices (app, device_id, platform, token, culture)
                            SELECT app, device_id, platform, token, culture FROM input
                            ON CONFLICT (app, device_id) DO UPDATE SET
                                platform = EXCLUDED.platform, token = EXCLUDED.token, culture = EXCLUDED.culture,
                                token_state = 'active', token_dead_reason = NULL, token_dead_at = NULL, updated_at = now()
                        )
                        UPDATE devices d SET token = NULL, updated_at = now()
                        FROM input i
                        WHERE i.token IS NOT NULL AND d.app = i.app AND d.token = i.token AND d.device_id <> i.device_id
                          AND NOT EXISTS (SELECT 1 FROM input j WHERE j.app = d.app AND j.device_id = d.device_id)
                        """,
                        [
                            chunk.map { $0.app ?? Self.defaultApp }, chunk.map(\.deviceId), chunk.map(\.platform.rawValue),
                            chunk.map(\.storedToken), chunk.map(\.culture),
                        ]
                    )
                }
                for start in stride(from: 0, to: linkRows.count, by: chunkSize) {
                    let chunk = linkRows[start..<min(start + chunkSize, linkRows.count)]
                    let separator = String(Character(Self.tagSeparator))
                    try await transaction.execute(
                        """
                        INSERT INTO device_users (device_ref, user_id, tags, zone_id, branch_id)
                        SELECT d.id, x.user_id,
                               CASE WHEN x.tags IS NULL THEN NULL ELSE string_to_array(x.tags, E'\\x1F') END,
                               x.zone_id, x.branch_id
                        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                            AS x(app, device_id, user_id, tags, zone_id, branch_id)
                        JOIN devices d ON d.app = x.app AND d.device_id = x.device_id
                        ON CONFLICT (device_ref, user_id) DO UPDATE SET
                            tags = EXCLUDED.tags, excluded_tags = '{}', zone_id = EXCLUDED.zone_id, branch_id = EXCLUDED.branch_id,
                            subscribed_at = now()
                        """,
                        [
                            chunk.map { $0.app ?? Self.defaultApp }, chunk.map(\.deviceId), chunk.map(\.userId),
                            chunk.map { $0.tags.isEmpty ? nil : Self.storedTags($0.tags).joined(separator: separator) } as [String?],
                            chunk.map(\.zoneId), chunk.map(\.branchId),
                        ]
                    )
                }
                try await transaction.execute("SELECT pg_notify($1, '*')", [StoreChannel.devices])
                return linkRows.count
            }
        }
        if devices.count >= Self.bulkImportSize {
            // Best effort: the import is committed, and autovacuum analyzes the tables later anyway.
            _ = try? await client.execute("ANALYZE devices, device_users, device_positions", [])
        }
        return imported
    }

    /// How many devices make an import a bulk one, worth analyzing the tables after.
    static let bulkImportSize = 1_000

    // MARK: - Helpers

    private struct DeviceKey: Hashable {
        var app: String
        var deviceId: String
    }

    private struct LinkKey: Hashable {
        var device: DeviceKey
        var userId: String
    }

    static let tagSeparator = Unicode.Scalar(0x1F)!

    /// `nil` for no token: `nil`, empty, or seed 001's `none` in any case.
    static func normalizedToken(_ token: String?) -> String? {
        guard let token, !token.isEmpty, token.lowercased() != "none" else { return nil }
        return token
    }

    /// Tags as stored: ASCII-lowercased, sorted, without duplicates.
    static func storedTags(_ tags: Set<String>) -> [String] {
        Array(Set(tags.map(Self.asciiLowercased))).sorted()
    }

    static func asciiLowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return text }
        return String(decoding: text.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }

    static func app(fromStored app: String) -> String? { app == defaultApp ? nil : app }

    private static let subscriptionSelect = """
        SELECT du.user_id, du.device_ref, d.device_id, d.app, d.platform, d.token, d.culture, du.zone_id, du.branch_id,
               du.tags, du.excluded_tags, coalesce(s.pushes_enabled, true) AS pushes_enabled,
               coalesce(s.muted_tags, '{}') AS muted_tags
        FROM device_users du
        JOIN devices d ON d.id = du.device_ref
        LEFT JOIN user_settings s ON s.user_id = du.user_id
        """

    private static let deviceSelect = """
        SELECT d.*, coalesce(p.next_position, 1) AS next_position, du.user_id, du.tags, du.excluded_tags, du.zone_id, du.branch_id, du.subscribed_at
        FROM devices d LEFT JOIN device_positions p ON p.device_ref = d.id LEFT JOIN device_users du ON du.device_ref = d.id
        """

    static func subscription(from row: PostgresRow) throws(PostgresError) -> Subscription {
        let platformName = try row.decode(String.self, column: "platform")
        guard let platform = Platform(rawValue: platformName) else {
            throw PostgresError(code: .decodingFailed, message: "unknown platform \(platformName)")
        }
        var muted = Set(try row.decode([String].self, column: "muted_tags"))
        muted.formUnion(try row.decode([String].self, column: "excluded_tags"))
        return Subscription(
            deviceId: try row.decode(String.self, column: "device_id"),
            token: try row.decode(String.self, column: "token"),
            platform: platform,
            userId: try row.decode(String.self, column: "user_id"),
            culture: try row.decode(String.self, column: "culture"),
            zoneId: try row.decode(String?.self, column: "zone_id"),
            branchId: try row.decode(String?.self, column: "branch_id"),
            tags: Set(try row.decode([String]?.self, column: "tags") ?? []),
            mutedTags: muted,
            isEnabled: try row.decode(Bool.self, column: "pushes_enabled"),
            app: app(fromStored: try row.decode(String.self, column: "app")),
            deviceRef: Int64(try row.decode(Int.self, column: "device_ref"))
        )
    }

    /// Groups device × user rows (ordered by device) into devices.
    static func devices(from rows: PostgresQueryResult) throws(PostgresError) -> [Device] {
        var devices: [Device] = []
        var lastId: Int?
        for row in rows {
            let id = try row.decode(Int.self, column: "id")
            if id != lastId {
                let platformName = try row.decode(String.self, column: "platform")
                let stateName = try row.decode(String.self, column: "token_state")
                guard let platform = Platform(rawValue: platformName), let state = TokenState(rawValue: stateName) else {
                    throw PostgresError(code: .decodingFailed, message: "unknown platform or token state")
                }
                devices.append(
                    Device(
                        deviceId: try row.decode(String.self, column: "device_id"),
                        app: app(fromStored: try row.decode(String.self, column: "app")),
                        platform: platform,
                        token: try row.decode(String?.self, column: "token"),
                        culture: try row.decode(String.self, column: "culture"),
                        tokenState: state,
                        tokenDeadReason: try row.decode(String?.self, column: "token_dead_reason"),
                        tokenDeadAt: try row.decode(Date?.self, column: "token_dead_at"),
                        badge: try row.decode(Int.self, column: "badge"),
                        nextPosition: try row.decode(Int.self, column: "next_position"),
                        createdAt: try row.decode(Date.self, column: "created_at"),
                        updatedAt: try row.decode(Date.self, column: "updated_at"),
                        users: []
                    ))
                lastId = id
            }
            if let userId = try row.decode(String?.self, column: "user_id") {
                devices[devices.count - 1].users.append(
                    DeviceUser(
                        userId: userId,
                        tags: try row.decode([String]?.self, column: "tags").map(Set.init),
                        excludedTags: Set(try row.decode([String].self, column: "excluded_tags")),
                        zoneId: try row.decode(String?.self, column: "zone_id"),
                        branchId: try row.decode(String?.self, column: "branch_id"),
                        subscribedAt: try row.decode(Date.self, column: "subscribed_at")
                    ))
            }
        }
        return devices
    }
}
