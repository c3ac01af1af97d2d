import Foundation
import HeraldCore
import HeraldPostgres

/// The hot path's record of deliveries: what makes them effectively-once across redeliveries
/// of a message, and the devices' numbered notification logs (seed 002).
///
/// Shape (docs/architecture.md, "The journal"): per message one `messages` row, created by
/// ``claim(_:)`` before anything is sent; per delivery one `journal` row, written by
/// ``record(_:)`` once its outcome is known (or when it is first retried). Before sending, a
/// claim also reserves each delivery's device position (one counter update per device per
/// batch), so positions are unique and consecutive per device whatever process sends.
///
/// A message the journal knew already (redelivered, replayed, published twice, a partition copy
/// made twice) is not new: ``history(of:)`` tells which of its deliveries ended (skip them),
/// which are retrying (send again at the same position), and the rest were never recorded:
/// they may have been sent just before a crash, and are sent again with the same collapse id
/// at a freshly ``reservePositions(_:)`` position.
///
/// Every call is one statement (or, for the rare outcomes, one transaction) on one pooled
/// connection, whatever the batch size. Safe from any number of tasks. Throws ``StoreError``;
/// `isTransient` errors may be retried with the same arguments: a repeated claim finds its
/// messages known, a repeated record is a no-op.
public struct DeliveryJournal: Sendable {
    let client: PostgresClient
    let logRetention: Duration
    let retention: Duration
    let dedupeRetention: Duration

    /// How long `AvoidDublication` remembers a message: a message with the same key within this
    /// long of the first is a repeat.
    public var duplicateWindow: Duration { dedupeRetention }

    // MARK: Before sending

    /// Starts the batch's messages and reserves positions for the deliveries of the new ones.
    ///
    /// Each new message row also gets the number of deliveries it planned (`planned`, what a
    /// support lookup compares with the recorded ones). With ``ClaimBatch/countsUnread`` the
    /// same statement reads the read positions of the devices concerned (`device_reads`), and
    /// the answer carries each delivery's unread count: its position minus its user's last read
    /// position on the device, less the pushes to other users of the device after that read
    /// (recorded ones, and earlier ones of this batch). A broadcast counts from the device's
    /// furthest read. Positions that were never shown (failed, token dead, in doubt) count
    /// until the next read; a user who never reported a read counts from 0.
    public func claim(_ batch: ClaimBatch) async throws(StoreError) -> ClaimAnswer {
        guard !batch.messages.isEmpty else { return ClaimAnswer(messageIds: [], positions: batch.deliveries.map { _ in nil }) }
        let request = ClaimRequest(batch)
        return try await request.run { (skippingKnown) async throws(StoreError) in
            try await StoreError.wrap("DeliveryJournal.claim") {
                try request.answer(try await client.query(request.sql(skippingKnown: skippingKnown), request.parameters(skippingKnown: skippingKnown)))
            }
        }
    }

    /// A new claim queue: claims sent back to back on a connection of its own (see
    /// ``ClaimQueue``). Close it when done.
    public func makeClaimQueue() -> ClaimQueue {
        ClaimQueue(connection: client.makeDedicatedConnection(label: "claims"))
    }

    /// Unread counts for ``claim(_:)``: `reads` holds, per device and user, the read position
    /// plus the recorded pushes to the device's other users after it.
    static func unread(_ deliveries: [ClaimBatch.Delivery], positions: [Int64?], reads: [Int64: [String: Int64]]) -> [Int?] {
        var earlier: [Int64: [String: Int]] = [:]  // per device, this batch's deliveries so far, by user
        var unread = [Int?](repeating: nil, count: deliveries.count)
        for (index, delivery) in deliveries.enumerated() {
            guard let position = positions[index] else { continue }
            let deviceReads = reads[delivery.deviceRef]
            var count: Int64
            if delivery.userId == "0" {
                count = position - (deviceReads?.values.max() ?? 0)
            } else {
                count = position - (deviceReads?[delivery.userId] ?? 0)
                if let byUser = earlier[delivery.deviceRef], deviceReads?[delivery.userId] != nil {
                    for (user, n) in byUser where user != delivery.userId && user != "0" { count -= Int64(n) }
                }
            }
            earlier[delivery.deviceRef, default: [:]][delivery.userId, default: 0] += 1
            unread[index] = Int(max(0, count))
        }
        return unread
    }

    /// What the journal knows of messages a claim found known; one entry per known key, in no
    /// particular order.
    public func history(of keys: [MessageKey]) async throws(StoreError) -> [MessageHistory] {
        guard !keys.isEmpty else { return [] }
        let byDigest = Dictionary(keys.map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
        return try await StoreError.wrap("DeliveryJournal.history") {
            let rows = try await client.query(
                """
                SELECT m.key, m.id, m.received_at, j.device_ref, j.user_id, j.position, j.state, j.attempts
                FROM messages m LEFT JOIN journal j ON j.message_id = m.id
                WHERE m.key = ANY($1::uuid[])
                """,
                [Array(byDigest.keys)]
            )
            var histories: [Int64: MessageHistory] = [:]
            for row in rows {
                let id = Int64(try row.decode(Int.self, at: 1))
                if histories[id] == nil {
                    guard let key = byDigest[try row.decode(UUID.self, at: 0)] else { continue }
                    histories[id] = MessageHistory(key: key, id: id, receivedAt: try row.decode(Date.self, at: 2), deliveries: [])
                }
                guard let deviceRef = try row.decode(Int?.self, at: 3) else { continue }
                let stateName = try row.decode(String.self, at: 6)
                guard let state = DeliveryState(rawValue: stateName) else {
                    throw StoreError(code: .schemaMismatch, message: "unknown delivery state \(stateName)")
                }
                histories[id]!.deliveries.append(
                    MessageHistory.Recorded(
                        deviceRef: Int64(deviceRef), userId: try row.decode(String.self, at: 4), position: Int64(try row.decode(Int.self, at: 5)),
                        state: state, attempts: try row.decode(Int.self, at: 7)
                    ))
            }
            return Array(histories.values)
        }
    }

    /// What the journal has of message `messageId`'s deliveries to these devices (a window of a
    /// broadcast that may have been under way when its worker went away): the message's other
    /// rows are not read.
    public func history(of key: MessageKey, messageId: Int64, deviceRefs: [Int64]) async throws(StoreError) -> MessageHistory {
        var history = MessageHistory(key: key, id: messageId, receivedAt: Date(), deliveries: [])
        guard !deviceRefs.isEmpty else { return history }
        return try await StoreError.wrap("DeliveryJournal.historyOfDevices") {
            let rows = try await client.query(
                "SELECT device_ref, user_id, position, state, attempts FROM journal WHERE device_ref = ANY($1::int8[]) AND message_id = $2",
                [deviceRefs.map { Int($0) }, messageId]
            )
            for row in rows {
                let stateName = try row.decode(String.self, at: 3)
                guard let state = DeliveryState(rawValue: stateName) else {
                    throw StoreError(code: .schemaMismatch, message: "unknown delivery state \(stateName)")
                }
                history.deliveries.append(
                    MessageHistory.Recorded(
                        deviceRef: try row.decode(Int64.self, at: 0), userId: try row.decode(String.self, at: 1), position: try row.decode(Int64.self, at: 2),
                        state: state, attempts: try row.decode(Int.self, at: 4)
                    ))
            }
            return history
        }
    }

    /// What the journal has of these deliveries, each named by its message's row and its device
    /// (deliveries in doubt after a crash or a backlog takeover): one index lookup per delivery,
    /// whatever the size of its message's audience. Keyed by message row id.
    public func recorded(messageIds: [Int64], deviceRefs: [Int64]) async throws(StoreError) -> [Int64: [MessageHistory.Recorded]] {
        precondition(messageIds.count == deviceRefs.count, "one message per device")
        guard !messageIds.isEmpty else { return [:] }
        return try await StoreError.wrap("DeliveryJournal.recorded") {
            let rows = try await client.query(
                """
                SELECT j.message_id, j.device_ref, j.user_id, j.position, j.state, j.attempts
                FROM (SELECT DISTINCT m, d FROM unnest($1::int8[], $2::int8[]) AS r(m, d)) r
                JOIN journal j ON j.device_ref = r.d AND j.message_id = r.m
                """,
                [messageIds.map { Int($0) }, deviceRefs.map { Int($0) }]
            )
            var recorded: [Int64: [MessageHistory.Recorded]] = [:]
            for row in rows {
                let stateName = try row.decode(String.self, at: 4)
                guard let state = DeliveryState(rawValue: stateName) else {
                    throw StoreError(code: .schemaMismatch, message: "unknown delivery state \(stateName)")
                }
                recorded[try row.decode(Int64.self, at: 0), default: []].append(
                    MessageHistory.Recorded(
                        deviceRef: try row.decode(Int64.self, at: 1), userId: try row.decode(String.self, at: 2), position: try row.decode(Int64.self, at: 3),
                        state: state, attempts: try row.decode(Int.self, at: 5)
                    ))
            }
            return recorded
        }
    }

    /// Reserves one position per element (a device listed n times gets n consecutive ones, in
    /// order); `nil` where the device no longer exists.
    public func reservePositions(_ deviceRefs: [Int64]) async throws(StoreError) -> [Int64?] {
        guard !deviceRefs.isEmpty else { return [] }
        return try await StoreError.wrap("DeliveryJournal.reservePositions") {
            let rows = try await client.query(
                """
                WITH c AS (SELECT device_ref, count(*) AS n FROM unnest($1::int8[]) AS u(device_ref) GROUP BY device_ref)
                \(Self.bumpPositionsSQL)
                """,
                [deviceRefs.map { Int($0) }]
            )
            var first: [Int64: Int64] = [:]
            for row in rows { first[Int64(try row.decode(Int.self, at: 0))] = Int64(try row.decode(Int.self, at: 1)) }
            return Self.positions(deviceRefs, first: first)
        }
    }

    /// Moves the position counters of the devices in `c` (device_ref, n) on by n; returns each
    /// device's first position taken.
    static let bumpPositionsSQL = """
        UPDATE device_positions p SET next_position = p.next_position + c.n
        FROM c WHERE p.device_ref = c.device_ref
        RETURNING p.device_ref, p.next_position - c.n
        """

    /// One position per element of `deviceRefs`, from each device's `first` (consecutive for a
    /// device listed several times); nil for a device without one (gone).
    static func positions(_ deviceRefs: [Int64], first: [Int64: Int64]) -> [Int64?] {
        var next = first
        return deviceRefs.map { device in
            guard let position = next[device] else { return nil }
            next[device] = position + 1
            return position
        }
    }

    /// Notes that repeats of these messages (journal ids, one element per repeat) were dropped
    /// as `AvoidDublication` repeats, for support lookups. Called only for chunks that had
    /// repeats: one statement on that rare path, none on the common one.
    public func noteRepeats(_ messageIds: [Int64]) async throws(StoreError) {
        guard !messageIds.isEmpty else { return }
        try await StoreError.wrap("DeliveryJournal.noteRepeats") {
            try await client.execute(
                """
                UPDATE messages m SET repeats = coalesce(m.repeats, 0) + c.n, last_repeat_at = now()
                FROM (SELECT id, count(*) AS n FROM unnest($1::int8[]) AS u(id) GROUP BY id) c
                WHERE m.id = c.id
                """,
                [messageIds.map { Int($0) }]
            )
        }
    }

    // MARK: After sending

    /// Writes outcomes: one row per delivery, or the completion of its `.pending` row. A
    /// terminal row is final (recording it again changes nothing); `.tokenDead` also marks the
    /// device's token dead if it is still the refused one. The common batch (first outcomes,
    /// nothing retried, no dead token) is one INSERT.
    public func record(_ records: [DeliveryRecord]) async throws(StoreError) {
        guard !records.isEmpty else { return }
        let isFresh = { (record: DeliveryRecord) in !record.completesPendingRow && record.state.isTerminal && record.backlogPlace == nil }
        let isDeadToken = { (record: DeliveryRecord) in record.state == .tokenDead && record.token != nil }
        if records.allSatisfy({ isFresh($0) && !isDeadToken($0) }) {
            // The common batch, taken as it is (no copies of the records).
            let rows = Self.rowParameters(records)
            try await StoreError.wrap("DeliveryJournal.record") {
                do {
                    try await client.execute(Self.insertSQL(onConflict: false, sharing: rows.sharing), rows.parameters)
                } catch let error as PostgresError where error.code == .uniqueViolation {
                    // A repeated record (the first one committed, its answer was lost).
                    try await client.execute(Self.insertSQL(onConflict: true, sharing: rows.sharing), rows.parameters)
                }
            }
            return
        }
        let fresh = records.filter(isFresh)
        let upserts = Self.onePerDelivery(records.filter { !isFresh($0) })
        let dead = records.filter(isDeadToken)
        let dequeued = records.filter { $0.state.isTerminal && $0.backlogPlace != nil }.map { $0.backlogPlace! }
        try await StoreError.wrap("DeliveryJournal.record") {
            try await client.withTransaction { transaction in
                if !fresh.isEmpty {
                    let rows = Self.rowParameters(fresh)
                    try await transaction.execute(Self.insertSQL(onConflict: true, sharing: rows.sharing), rows.parameters)
                }
                if !upserts.isEmpty {
                    let rows = Self.rowParameters(upserts)
                    try await transaction.execute(Self.upsertSQL(sharing: rows.sharing), rows.parameters)
                }
                if !dead.isEmpty {
                    try await transaction.execute(
                        """
                        UPDATE devices d SET token_state = 'dead', token_dead_reason = t.reason, token_dead_at = now(), updated_at = now()
                        FROM unnest($1::int8[], $2::text[], $3::text[]) AS t(id, token, reason)
                        WHERE d.id = t.id AND d.token = t.token AND d.token_state = 'active'
                        """,
                        [dead.map { Int($0.deviceRef) }, dead.map { $0.token! }, dead.map { $0.lastError ?? "token refused" }]
                    )
                }
                if !dequeued.isEmpty {
                    try await transaction.execute(DeliveryBacklog.removeSQL, DeliveryBacklog.placeParameters(dequeued))
                }
            }
        }
    }

    /// One row per delivery (device and position), as writing them in order would leave it: the
    /// first terminal one, else the last. An upsert that meets its key twice fails the whole
    /// statement (SQLSTATE 21000), so a batch that carries two records of one delivery (two
    /// copies in flight at once, which the engine avoids but the store does not rely on) must
    /// not fail for it.
    static func onePerDelivery(_ records: [DeliveryRecord]) -> [DeliveryRecord] {
        struct Key: Hashable {
            let deviceRef: Int64
            let position: Int64
        }
        var places: [Key: Int] = [:]
        var kept: [DeliveryRecord] = []
        kept.reserveCapacity(records.count)
        for record in records {
            let key = Key(deviceRef: record.deviceRef, position: record.position)
            guard let place = places[key] else {
                places[key] = kept.count
                kept.append(record)
                continue
            }
            if !kept[place].state.isTerminal { kept[place] = record }
        }
        return kept
    }

    // MARK: Reading

    /// The deliveries recorded for one message (one partition copy's, for a copy key), with
    /// their devices; empty when unknown.
    public func deliveries(ofMessage key: MessageKey) async throws(StoreError) -> [DeliveryStatus] {
        try await StoreError.wrap("DeliveryJournal.deliveries") {
            let rows = try await client.query(
                """
                SELECT \(Self.statusColumns)
                FROM messages m JOIN journal j ON j.message_id = m.id LEFT JOIN devices d ON d.id = j.device_ref
                WHERE m.key = $1
                ORDER BY j.device_ref, j.position
                """,
                [key.digest]
            )
            return try rows.map { (row) throws(PostgresError) in try Self.status(row) }
        }
    }

    /// The columns ``status(_:)`` reads, from `journal j`, `messages m` and `devices d` (the
    /// last two may be outer-joined: a row migrated from version 1 has no message, a device may
    /// be gone).
    static let statusColumns = """
        coalesce(\(MessageKey.textSQL), '') AS key_text, coalesce(m.received_at, j.recorded_at) AS received_at, j.user_id,
        coalesce(j.event_id, m.event_id) AS event_id, j.position, j.state, j.attempts, j.provider_id, j.last_error, j.recorded_at,
        j.collapse_id, d.app, d.device_id, d.platform
        """

    static func status(_ row: PostgresRow) throws(PostgresError) -> DeliveryStatus {
        let messageKey = try row.decode(String.self, column: "key_text")
        let app = try row.decode(String?.self, column: "app")
        let deviceId = try row.decode(String?.self, column: "device_id")
        let userId = try row.decode(String.self, column: "user_id")
        let stateName = try row.decode(String.self, column: "state")
        let collapseId = try row.decode(String?.self, column: "collapse_id")
        let key =
            collapseId.map(DeliveryKey.init(rawValue:))
            ?? deviceId.map { DeliveryKey(messageKey: messageKey, deviceId: $0, userId: userId, app: app.flatMap(DeviceRepository.app(fromStored:))) }
        return DeliveryStatus(
            deliveryKey: key,
            messageKey: messageKey, deviceId: deviceId, app: app, platform: try row.decode(String?.self, column: "platform").flatMap(Platform.init(rawValue:)),
            userId: userId, eventId: try row.decode(String?.self, column: "event_id"), position: try row.decode(Int.self, column: "position"),
            state: DeliveryState(rawValue: stateName) ?? .pending, attempts: try row.decode(Int.self, column: "attempts"),
            providerId: try row.decode(String?.self, column: "provider_id"), lastError: try row.decode(String?.self, column: "last_error"),
            receivedAt: try row.decode(Date.self, column: "received_at"), recordedAt: try row.decode(Date.self, column: "recorded_at")
        )
    }

    // MARK: Retention

    /// Forgets deliveries recorded and messages received longer ago than the retention (the
    /// longer of the journal's and the notification log's; messages also the AvoidDublication
    /// window), at most `limit` rows of each per call. A message redelivered after that is sent
    /// again, so keep the retention longer than any redelivery can take. A message outlives its
    /// deliveries' rows (their log entries read its key and shared bodies), and its shared bodies
    /// go with it.
    @discardableResult
    public func expire(limit: Int = 10_000) async throws(StoreError) -> (deliveries: Int, messages: Int) {
        let rows = Int(max(retention, logRetention).components.seconds)
        let messages = Int(max(retention, logRetention, dedupeRetention).components.seconds)
        return try await StoreError.wrap("DeliveryJournal.expire") {
            let deliveries = try await client.execute(
                """
                DELETE FROM journal WHERE ctid = ANY (ARRAY(
                    SELECT ctid FROM journal WHERE recorded_at < now() - make_interval(secs => $1) LIMIT $2))
                """,
                [rows, limit]
            )
            let expired = try await client.query(
                """
                WITH gone AS (
                    DELETE FROM messages WHERE ctid = ANY (ARRAY(
                        SELECT ctid FROM messages m WHERE received_at < now() - make_interval(secs => $1)
                            AND NOT EXISTS (SELECT 1 FROM journal j WHERE j.message_id = m.id) LIMIT $2))
                    RETURNING id
                ), bodies AS (DELETE FROM message_payloads WHERE message_id IN (SELECT id FROM gone))
                SELECT count(*) FROM gone
                """,
                [messages, limit]
            )
            return (deliveries, try expired.first?.decode(Int.self, at: 0) ?? 0)
        }
    }

    // MARK: SQL

    /// The claim statement: creates the rows of new messages and bumps the position counters of
    /// their deliveries' devices. Answers `(0, message id, ordinal)` per new message and `(1,
    /// device id, first reserved position)` per device. `countingUnread` also answers `(2,
    /// device id, read position + pushes to other users after it, user id)` per read row of the
    /// devices concerned (the count of other users' pushes reads the journal only for a device
    /// shared by several users).
    ///
    /// `skippingKnown`: a known key is skipped (`ON CONFLICT DO NOTHING`, a speculative insertion
    /// per row, dearer than the plain insert, which fails on a known key instead:
    /// docs/performance.md, "The claim that skips known messages"). Only that statement must find out which messages are new before it counts
    /// positions, so it takes each delivery's message ordinal and device (`$6`, `$7`) and counts
    /// the new ones' by device itself. The plain statement makes every message new or fails, so
    /// it takes each device once with its count (`$6`, `$7`, ``ClaimRequest``): no join or
    /// grouping per delivery (docs/performance.md, "The claim without its per-delivery join").
    static func claimSQL(countingUnread: Bool, skippingKnown: Bool) -> String {
        switch (countingUnread, skippingKnown) {
        case (false, false): plainClaimSQL
        case (false, true): skippingClaimSQL
        case (true, false): plainCountingClaimSQL
        case (true, true): skippingCountingClaimSQL
        }
    }

    private static let plainClaimSQL = makeClaimSQL(countingUnread: false, skippingKnown: false)
    private static let skippingClaimSQL = makeClaimSQL(countingUnread: false, skippingKnown: true)
    private static let plainCountingClaimSQL = makeClaimSQL(countingUnread: true, skippingKnown: false)
    private static let skippingCountingClaimSQL = makeClaimSQL(countingUnread: true, skippingKnown: true)

    private static func makeClaimSQL(countingUnread: Bool, skippingKnown: Bool) -> String {
        let counts =
            skippingKnown
            ? """
            counts AS (
                SELECT d.device_ref, count(*) AS n
                FROM unnest($6::int8[], $7::int8[]) AS d(ord, device_ref)
                JOIN m ON m.ord = d.ord JOIN fresh f ON f.key = m.key
                GROUP BY d.device_ref
            )
            """
            : "counts AS (SELECT * FROM unnest($6::int8[], $7::int8[]) AS c(device_ref, n))"
        return """
            WITH m AS (
                SELECT * FROM unnest($1::uuid[], $2::text[], $3::bytea[], $4::text[], $5::int4[]) WITH ORDINALITY AS m(key, key_text, key_hash, event_id, planned, ord)
            ),
            fresh AS (
                INSERT INTO messages (key, key_text, key_hash, event_id, planned) SELECT key, key_text, key_hash, event_id, planned FROM m
                \(skippingKnown ? "ON CONFLICT (key) DO NOTHING" : "")
                RETURNING key, id
            ),
            \(counts),
            bumped AS (
                UPDATE device_positions p SET next_position = p.next_position + c.n
                FROM counts c WHERE p.device_ref = c.device_ref
                RETURNING p.device_ref, p.next_position - c.n AS first
            )
            SELECT 0, f.id, m.ord\(countingUnread ? ", NULL::text" : "") FROM fresh f JOIN m ON m.key = f.key
            UNION ALL
            SELECT 1, b.device_ref, b.first\(countingUnread ? ", NULL::text" : "") FROM bumped b
            \(countingUnread ? """
            UNION ALL
            SELECT 2, r.device_ref,
                r.position + CASE WHEN EXISTS (SELECT 1 FROM device_users du WHERE du.device_ref = r.device_ref AND du.user_id <> r.user_id)
                    THEN (SELECT count(*) FROM journal j WHERE j.device_ref = r.device_ref AND j.position > r.position AND j.user_id <> r.user_id AND j.user_id <> '0')
                    ELSE 0 END,
                r.user_id
            FROM device_reads r WHERE r.device_ref IN (SELECT device_ref FROM counts)
            """ : "")
            """
    }

    /// The outcome statements, built once like the claim's (a batch picks one).
    static func insertSQL(onConflict: Bool, sharing: Bool) -> String {
        switch (onConflict, sharing) {
        case (false, false): plainInsertSQL
        case (false, true): plainSharingInsertSQL
        case (true, false): skippingInsertSQL
        case (true, true): skippingSharingInsertSQL
        }
    }

    /// Writes or completes `.pending`, `.deferred` and `.queued` rows; a terminal row is never
    /// changed, and a `.queued` one only by a terminal record (its backlog row resumes it: a
    /// `.pending` write that lands after the delivery was queued must not hide that).
    static func upsertSQL(sharing: Bool) -> String {
        sharing ? sharingUpsertSQL : plainUpsertSQL
    }

    private static let plainInsertSQL = makeInsertSQL(onConflict: false, sharing: false)
    private static let plainSharingInsertSQL = makeInsertSQL(onConflict: false, sharing: true)
    private static let skippingInsertSQL = makeInsertSQL(onConflict: true, sharing: false)
    private static let skippingSharingInsertSQL = makeInsertSQL(onConflict: true, sharing: true)
    private static let plainUpsertSQL = makeUpsertSQL(sharing: false)
    private static let sharingUpsertSQL = makeUpsertSQL(sharing: true)

    private static func makeInsertSQL(onConflict: Bool, sharing: Bool) -> String {
        rowsSQL(sharing: sharing) + (onConflict ? "\nON CONFLICT (device_ref, position) DO NOTHING" : "")
    }

    private static func makeUpsertSQL(sharing: Bool) -> String {
        rowsSQL(sharing: sharing) + """

            ON CONFLICT (device_ref, position) DO UPDATE
            SET state = EXCLUDED.state, attempts = EXCLUDED.attempts, provider_id = EXCLUDED.provider_id, last_error = EXCLUDED.last_error,
                payload = EXCLUDED.payload, payload_digest = EXCLUDED.payload_digest, recorded_at = now()
            WHERE journal.state IN ('pending', 'deferred') OR (journal.state = 'queued' AND EXCLUDED.state NOT IN ('pending', 'deferred'))
            """
    }

    /// The INSERT of a batch's rows (``rowParameters(_:)``). With `sharing`, the bodies that
    /// several rows share (``SharedPayloads``, `$11`–`$13`) are written to `message_payloads` in
    /// the same statement, so a row never names a digest whose body is not stored. They come as
    /// arrays of their own: reading the rows' arrays twice (a materialized CTE) cost more per row
    /// than the plain INSERT (docs/performance.md, "Shared bodies as arrays of their own"). They
    /// are written in key order: two batches in flight may both write the bodies of the same two
    /// broadcasts, and each waits for the other's uncommitted row; in arrival order that could
    /// cross (seen once as a deadlock, SQLSTATE 40P01, during a large backlog run).
    private static func rowsSQL(sharing: Bool) -> String {
        let rows = """
            INSERT INTO journal (device_ref, position, message_id, user_id, state, attempts, provider_id, last_error, payload, payload_digest)
            SELECT d, p, m, u, s, a::integer, i, x, b, h
            FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::text[], $5::text[], $6::int8[], $7::text[], $8::text[], $9::text[], $10::uuid[])
                AS r(d, p, m, u, s, a, i, x, b, h)
            """
        guard sharing else { return rows }
        return """
            WITH shared AS (
                INSERT INTO message_payloads (message_id, digest, payload)
                SELECT m, h, b FROM unnest($11::int8[], $12::uuid[], $13::text[]) AS s(m, h, b) ORDER BY m, h ON CONFLICT DO NOTHING)
            \(rows)
            """
    }

    /// The parameters of ``rowsSQL(sharing:)``, and whether any body is shared.
    static func rowParameters(_ records: [DeliveryRecord]) -> (parameters: [any PostgresBindable], sharing: Bool) {
        let payloads = SharedPayloads(records)
        // Each column reads its field in place: `records.map(\.userId)` and the like copied the
        // whole record (every string and the payload retained) once per column.
        func column<T>(_ field: (Int) -> T) -> [T] { records.indices.map(field) }
        var parameters: [any PostgresBindable] = [
            column { Int(records[$0].deviceRef) }, column { Int(records[$0].position) }, column { Int(records[$0].messageId) },
            column { records[$0].userId }, column { records[$0].state.rawValue }, column { records[$0].attempts },
            column { records[$0].providerId }, column { records[$0].lastError }, PostgresUTF8Array(payloads.payloads), payloads.digests,
        ]
        if payloads.isSharing {
            parameters += [
                payloads.shared.map { Int($0.messageId) }, payloads.shared.map(\.digest), PostgresUTF8Array(payloads.shared.map(\.body)),
            ]
        }
        return (parameters, payloads.isSharing)
    }
}
