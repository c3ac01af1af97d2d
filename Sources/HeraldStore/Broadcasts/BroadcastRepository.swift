import Foundation
import HeraldPostgres

/// Broadcasts sent in windows (migration 10, docs/architecture.md "Broadcasts"): a broadcast too
/// large to hold in memory is written here with its journal message row, its AMQP message is
/// then acknowledged, and a worker reads and sends it a window of devices at a time, recording
/// how far it went. One worker runs a broadcast at a time: the holder of its lease, which it
/// renews while running; a lease that ran out (its worker died or lost the database) is taken
/// over by any worker, which resumes after the last window done. Throws ``StoreError``.
public struct BroadcastRepository: Sendable {
    let client: PostgresClient

    /// Writes a new broadcast, held by `holder` for `lease`: nil when its message is one the
    /// journal already has a broadcast for (a redelivery or a repeat: the broadcast is under
    /// way or done). A message the journal knows without a broadcast (sent in memory before the
    /// audience grew) gets one whose every window is checked against the journal.
    public func begin(_ broadcast: Broadcast, eventId: String, holder: String, lease: Duration) async throws(StoreError) -> Broadcast? {
        try await StoreError.wrap("BroadcastRepository.begin") {
            try await client.withTransaction { transaction in
                let stored = broadcast.key.stored
                var known = false
                var id = try await transaction.query(
                    """
                    INSERT INTO messages (key, key_text, key_hash, event_id) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (key) DO NOTHING RETURNING id
                    """,
                    [broadcast.key.digest, stored.text, stored.hash.map { Data($0) }, eventId]
                ).first.map { try $0.decode(Int64.self, at: 0) }
                if id == nil {
                    known = true
                    id = try await transaction.query("SELECT id FROM messages WHERE key = $1", [broadcast.key.digest]).first.map {
                        try $0.decode(Int64.self, at: 0)
                    }
                }
                guard let id else { return nil }
                var started = broadcast
                started.messageId = id
                started.claimed = known ? Int64.max : 0
                let inserted = try await transaction.execute(
                    """
                    INSERT INTO broadcasts (message_id, body, content_type, part, parts, claimed, holder, lease_until)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, now() + $8 * interval '1 millisecond')
                    ON CONFLICT (message_id) DO NOTHING
                    """,
                    [
                        id, Data(broadcast.body), broadcast.contentType, broadcast.partition, broadcast.partitions, started.claimed,
                        holder, Self.milliseconds(lease),
                    ]
                )
                return inserted == 1 ? started : nil
            }
        }
    }

    /// Takes over one unfinished broadcast whose lease ran out (none held by `holder` now, nor
    /// listed in `excluding`), for `lease`; nil when there is none.
    public func takeOver(holder: String, lease: Duration) async throws(StoreError) -> Broadcast? {
        try await StoreError.wrap("BroadcastRepository.takeOver") {
            let rows = try await client.query(
                """
                UPDATE broadcasts b SET holder = $1, lease_until = now() + $2 * interval '1 millisecond'
                FROM messages m
                WHERE m.id = b.message_id AND b.message_id = (
                    SELECT message_id FROM broadcasts WHERE state = 'running' AND lease_until < now()
                    ORDER BY lease_until LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING b.message_id, \(MessageKey.textSQL), b.body, b.content_type, b.part, b.parts, b.cursor, b.claimed, b.selected
                """,
                [holder, Self.milliseconds(lease)]
            )
            guard let row = rows.first else { return nil }
            let partition = try row.decode(Int?.self, at: 4), partitions = try row.decode(Int?.self, at: 5)
            let suffix = partition.flatMap { p in partitions.map { "#p\(p)/\($0)" } } ?? ""
            return Broadcast(
                messageId: try row.decode(Int64.self, at: 0), key: MessageKey(text: try row.decode(String.self, at: 1), partitionSuffix: suffix),
                body: Array(try row.decode(Data.self, at: 2)), contentType: try row.decode(String?.self, at: 3),
                partition: partition, partitions: partitions,
                cursor: try row.decode(Int64.self, at: 6), claimed: try row.decode(Int64.self, at: 7), selected: try row.decode(Int64.self, at: 8)
            )
        }
    }

    /// Renews `holder`'s leases of these broadcasts; returns those it still holds (a lease that
    /// ran out may have been taken over: its holder must stop starting windows).
    public func renew(_ messageIds: [Int64], holder: String, lease: Duration) async throws(StoreError) -> Set<Int64> {
        guard !messageIds.isEmpty else { return [] }
        return try await StoreError.wrap("BroadcastRepository.renew") {
            let rows = try await client.query(
                """
                UPDATE broadcasts SET lease_until = now() + $3 * interval '1 millisecond'
                WHERE message_id = ANY($1::int8[]) AND holder = $2 AND state = 'running' RETURNING message_id
                """,
                [messageIds.map { Int($0) }, holder, Self.milliseconds(lease)]
            )
            return Set(try rows.map { (row) throws(PostgresError) in try row.decode(Int64.self, at: 0) })
        }
    }

    /// Starts a window: notes that windows were started up to device `claimed` (before any of
    /// their deliveries is sent) and reserves one position per element of `deviceRefs` (as
    /// ``DeliveryJournal/reservePositions(_:)``), in one statement; nil when `holder` no longer
    /// holds the broadcast (nothing reserved).
    public func claim(
        _ messageId: Int64, through claimed: Int64, holder: String, positionsFor deviceRefs: [Int64]
    ) async throws(StoreError)
        -> [Int64?]?
    {
        try await StoreError.wrap("BroadcastRepository.claim") {
            let rows = try await client.query(
                """
                WITH held AS (
                    UPDATE broadcasts SET claimed = greatest(claimed, $2) WHERE message_id = $1 AND holder = $3 AND state = 'running'
                    RETURNING 1),
                c AS (
                    SELECT device_ref, count(*) AS n FROM unnest($4::int8[]) AS u(device_ref)
                    WHERE EXISTS (SELECT 1 FROM held) GROUP BY device_ref),
                bumped AS (\(DeliveryJournal.bumpPositionsSQL))
                SELECT * FROM bumped UNION ALL SELECT -1, -1 FROM held
                """,
                [messageId, claimed, holder, deviceRefs.map { Int($0) }]
            )
            var first: [Int64: Int64] = [:]
            var held = false
            for row in rows {
                let device = Int64(try row.decode(Int.self, at: 0))
                if device < 0 { held = true } else { first[device] = Int64(try row.decode(Int.self, at: 1)) }
            }
            return held ? DeliveryJournal.positions(deviceRefs, first: first) : nil
        }
    }

    /// Records that every window up to device `cursor` is done, with `selected` devices in all;
    /// `finished`: the audience is read to its end. False when `holder` no longer holds it.
    public func advance(_ messageId: Int64, cursor: Int64, selected: Int64, finished: Bool, holder: String) async throws(StoreError) -> Bool {
        try await StoreError.wrap("BroadcastRepository.advance") {
            try await client.execute(
                """
                UPDATE broadcasts SET cursor = $2, selected = $3,
                    state = CASE WHEN $4 THEN 'done' ELSE state END, finished_at = CASE WHEN $4 THEN now() END
                WHERE message_id = $1 AND holder = $5 AND state = 'running'
                """,
                [messageId, cursor, selected, finished, holder]) == 1
        }
    }

    /// Gives up `holder`'s leases (a graceful stop): another worker, or this one restarted,
    /// resumes them at once.
    public func release(_ messageIds: [Int64], holder: String) async throws(StoreError) {
        guard !messageIds.isEmpty else { return }
        try await StoreError.wrap("BroadcastRepository.release") {
            _ = try await client.execute(
                "UPDATE broadcasts SET holder = NULL, lease_until = now() - interval '1 second' WHERE message_id = ANY($1::int8[]) AND holder = $2",
                [messageIds.map { Int($0) }, holder])
        }
    }

    /// Broadcasts not finished yet.
    public func unfinishedCount() async throws(StoreError) -> Int {
        try await StoreError.wrap("BroadcastRepository.unfinishedCount") {
            try await client.query("SELECT count(*) FROM broadcasts WHERE state = 'running'", []).first?.decode(Int.self, at: 0) ?? 0
        }
    }

    /// The journal message id of the broadcast of `key`, and whether it is done; nil when no
    /// broadcast was written down for it (not seen yet, or sent in memory).
    public func find(_ key: MessageKey) async throws(StoreError) -> (messageId: Int64, done: Bool)? {
        try await StoreError.wrap("BroadcastRepository.find") {
            let rows = try await client.query(
                "SELECT b.message_id, b.state = 'done' FROM broadcasts b JOIN messages m ON m.id = b.message_id WHERE m.key = $1", [key.digest])
            guard let row = rows.first else { return nil }
            return (try row.decode(Int64.self, at: 0), try row.decode(Bool.self, at: 1))
        }
    }

    /// The progress of the broadcast of journal message `messageId`; nil when it is not one.
    public func progress(ofMessage messageId: Int64) async throws(StoreError) -> BroadcastProgress? {
        try await StoreError.wrap("BroadcastRepository.progress") { try await Self.progress(of: [messageId], client: client)[messageId] }
    }

    /// The progress of those of these journal messages that are broadcasts sent in windows (for
    /// support lookups too).
    static func progress(of messageIds: [Int64], client: PostgresClient) async throws(PostgresError) -> [Int64: BroadcastProgress] {
        let rows = try await client.query(
            """
            SELECT b.message_id, b.state = 'done', b.selected,
                count(j.*) FILTER (WHERE j.state = 'sent'),
                count(j.*) FILTER (WHERE j.state IN ('pending', 'deferred', 'queued')),
                count(j.*) FILTER (WHERE j.state IN ('failed', 'token_dead'))
            FROM broadcasts b LEFT JOIN journal j ON j.message_id = b.message_id
            WHERE b.message_id = ANY($1::int8[]) GROUP BY b.message_id
            """,
            [messageIds.map { Int($0) }]
        )
        var progress: [Int64: BroadcastProgress] = [:]
        for row in rows {
            progress[try row.decode(Int64.self, at: 0)] = BroadcastProgress(
                done: try row.decode(Bool.self, at: 1), selected: try row.decode(Int64.self, at: 2), sent: try row.decode(Int64.self, at: 3),
                waiting: try row.decode(Int64.self, at: 4), failed: try row.decode(Int64.self, at: 5))
        }
        return progress
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
