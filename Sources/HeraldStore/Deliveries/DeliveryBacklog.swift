import HeraldPostgres

/// The per-user backlog (migration 8): deliveries that wait behind their user's earlier push,
/// kept in PostgreSQL so that their messages can be acknowledged and a busy user holds back
/// nobody else. One worker at a time queues and sends them (``BacklogLock``); a terminal
/// ``DeliveryRecord`` with a ``DeliveryRecord/backlogPlace`` removes its row when it is
/// recorded (``DeliveryJournal/record(_:)``). Safe from any number of tasks. Throws
/// ``StoreError``.
public struct DeliveryBacklog: Sendable {
    let client: PostgresClient

    /// Queues deliveries, in one transaction: their backlog rows, and their journal rows as
    /// `.queued` (written, or a `.pending`/`.deferred` row moved to it), so that a redelivered
    /// copy of their message leaves them to the backlog. Queueing the same place again changes
    /// nothing.
    public func enqueue(_ rows: [BacklogRow]) async throws(StoreError) {
        guard !rows.isEmpty else { return }
        try await StoreError.wrap("DeliveryBacklog.enqueue") {
            try await client.withTransaction { transaction in
                try await transaction.execute(
                    """
                    INSERT INTO backlog (order_key, seq, device_ref, position, delivery)
                    SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[], $4::int8[], $5::text[])
                    ON CONFLICT (order_key, seq) DO NOTHING
                    """,
                    [
                        rows.map(\.place.orderKey), rows.map { Int($0.place.seq) }, rows.map { Int($0.deviceRef) }, rows.map { Int($0.position) },
                        PostgresUTF8Array(rows.map(\.delivery)),
                    ]
                )
                try await transaction.execute(
                    """
                    INSERT INTO journal (device_ref, position, message_id, user_id, state, attempts)
                    SELECT d, p, m, u, 'queued', a::integer FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::text[], $5::int8[]) AS r(d, p, m, u, a)
                    ON CONFLICT (device_ref, position) DO UPDATE SET state = 'queued', attempts = EXCLUDED.attempts, recorded_at = now()
                    WHERE journal.state IN ('pending', 'deferred')
                    """,
                    [
                        rows.map { Int($0.deviceRef) }, rows.map { Int($0.position) }, rows.map { Int($0.messageId) }, rows.map(\.userId),
                        rows.map(\.attempts),
                    ]
                )
            }
        }
    }

    /// Every order that has queued deliveries, with the last place taken in it (new ones go
    /// after it).
    public func orders() async throws(StoreError) -> [(orderKey: String, lastSeq: Int64)] {
        try await StoreError.wrap("DeliveryBacklog.orders") {
            let rows = try await client.query("SELECT order_key, max(seq) FROM backlog GROUP BY order_key", [])
            return try rows.map { (row) throws(PostgresError) in (try row.decode(String.self, at: 0), try row.decode(Int64.self, at: 1)) }
        }
    }

    /// The next queued deliveries of several orders in one query: for each read, up to its
    /// `limit` after its place `after`, in order. Keyed by order; an order with nothing left
    /// after its place is absent. A takeover reads one window per user with a backlog, so the
    /// reads go by the hundred, not one query each.
    public func windows(_ reads: [(orderKey: String, after: Int64, limit: Int)]) async throws(StoreError) -> [String: [BacklogEntry]] {
        guard !reads.isEmpty else { return [:] }
        return try await StoreError.wrap("DeliveryBacklog.windows") {
            let rows = try await client.query(
                """
                SELECT r.k, b.seq, b.delivery FROM unnest($1::text[], $2::int8[], $3::int8[]) AS r(k, s, l)
                CROSS JOIN LATERAL (SELECT seq, delivery FROM backlog WHERE order_key = r.k AND seq > r.s ORDER BY seq LIMIT r.l) b
                ORDER BY r.k, b.seq
                """,
                [reads.map(\.orderKey), reads.map { Int($0.after) }, reads.map(\.limit)])
            var windows: [String: [BacklogEntry]] = [:]
            for row in rows {
                windows[try row.decode(String.self, at: 0), default: []].append(
                    BacklogEntry(seq: try row.decode(Int64.self, at: 1), delivery: Array(try row.decode(String.self, at: 2).utf8)))
            }
            return windows
        }
    }

    /// Queued deliveries in all.
    public func count() async throws(StoreError) -> Int {
        try await StoreError.wrap("DeliveryBacklog.count") {
            try await client.query("SELECT count(*) FROM backlog", []).first?.decode(Int.self, at: 0) ?? 0
        }
    }

    /// Removes rows by place (``placeParameters(_:)``): in the transaction that records their
    /// outcomes.
    static let removeSQL = """
        DELETE FROM backlog b USING unnest($1::text[], $2::int8[]) AS r(k, s) WHERE b.order_key = r.k AND b.seq = r.s
        """

    static func placeParameters(_ places: [BacklogPlace]) -> [any PostgresBindable] {
        [places.map(\.orderKey), places.map { Int($0.seq) }]
    }
}
