import Foundation
import HeraldCore
import HeraldPostgres

/// The hot path's record of deliveries: which were claimed, with what position, and how each
/// ended. It makes deliveries effectively-once across redeliveries of a message.
///
/// Every call is one statement on one pooled connection (a PL/pgSQL function over arrays, so
/// one round trip however large the batch) and its own transaction: it commits or fails as a
/// whole. Batches of a few hundred are the intended size. Safe to call from any number of
/// tasks at once; claims of one device serialize on its row lock (so positions never repeat
/// and a key is fresh exactly once) and lock devices in a fixed order (so batches do not
/// deadlock).
///
/// Throws ``StoreError``; `isTransient` errors (database unavailable, timeout) may be retried
/// with the same batch: a claim that did commit answers `.inDoubt` the second time, and a
/// repeated record is a no-op.
public struct DeliveryJournal: Sendable {
    let client: PostgresClient
    let logRetention: Duration
    let retention: Duration

    init(client: PostgresClient, logRetention: Duration, retention: Duration) {
        self.client = client
        self.logRetention = logRetention
        self.retention = retention
    }

    /// Claims deliveries before sending them, one answer per claim in the same order.
    ///
    /// A fresh claim takes its device's next position atomically; fresh claims of one device
    /// in one batch get consecutive positions in claim order. A repeated claim answers what
    /// the journal knows (`.alreadySent`, `.alreadyTerminal`, `.inDoubt` with the stored
    /// position); a key repeated within the batch is fresh once and in doubt after that.
    public func claim(_ claims: [DeliveryClaim]) async throws(StoreError) -> [ClaimResult] {
        guard !claims.isEmpty else { return [] }
        var keys: [String] = [], messageKeys: [String] = [], users: [String] = [], apps: [String] = [], devices: [String] = []
        keys.reserveCapacity(claims.count)
        messageKeys.reserveCapacity(claims.count)
        users.reserveCapacity(claims.count)
        apps.reserveCapacity(claims.count)
        devices.reserveCapacity(claims.count)
        for claim in claims {
            keys.append(claim.deliveryKey.rawValue)
            messageKeys.append(claim.messageKey)
            users.append(claim.userId)
            apps.append(claim.app ?? DeviceRepository.defaultApp)
            devices.append(claim.deviceId)
        }
        return try await StoreError.wrap("DeliveryJournal.claim") {
            let rows = try await client.query(
                "SELECT ord, outcome, pos, attempts FROM herald_claim_deliveries($1, $2, $3, $4, $5)",
                [keys, messageKeys, users, apps, devices]
            )
            guard rows.count == claims.count else {
                throw StoreError(code: .schemaMismatch, message: "the claim function answered \(rows.count) rows for \(claims.count) claims")
            }
            var results: [ClaimResult] = []
            results.reserveCapacity(rows.count)
            for row in rows {
                let outcome = try row.decode(String.self, at: 1)
                let position = try row.decode(Int?.self, at: 2)
                switch outcome {
                case "fresh":
                    results.append(.fresh(position: position ?? 0))
                case "pending":
                    results.append(.inDoubt(position: position ?? 0, attempts: try row.decode(Int.self, at: 3)))
                case "sent":
                    results.append(.alreadySent)
                case "unknown_device":
                    results.append(.unknownDevice)
                default:
                    guard let state = DeliveryState(rawValue: outcome) else {
                        throw StoreError(code: .schemaMismatch, message: "unknown claim outcome \(outcome)")
                    }
                    results.append(.alreadyTerminal(state))
                }
            }
            return results
        }
    }

    /// Records outcomes. Only pending deliveries change: a terminal state is final, so
    /// recording twice is harmless. `.sent` appends the payload to the notification log at
    /// the delivery's position (kept for the configured log retention); `.tokenDead` marks
    /// the device's token dead if it is still the token that was refused. Unknown keys are
    /// ignored. Returns how many deliveries changed.
    @discardableResult
    public func record(_ records: [DeliveryRecord]) async throws(StoreError) -> Int {
        guard !records.isEmpty else { return 0 }
        var keys: [String] = [], states: [String] = [], attempts: [Int] = [], errors: [String?] = []
        var eventIds: [String?] = [], payloads: [String?] = [], tokens: [String?] = []
        for record in records {
            keys.append(record.deliveryKey.rawValue)
            states.append(record.state.rawValue)
            attempts.append(record.attempts)
            errors.append(record.lastError)
            eventIds.append(record.eventId)
            payloads.append(record.payload)
            tokens.append(record.token)
        }
        let seconds = Int(logRetention.components.seconds)
        return try await StoreError.wrap("DeliveryJournal.record") {
            let rows = try await client.query(
                "SELECT herald_record_deliveries($1, $2, $3, $4, $5, $6, $7, $8)",
                [keys, states, attempts, errors, eventIds, payloads, tokens, seconds]
            )
            return try rows.first?.decode(Int.self, at: 0) ?? 0
        }
    }

    /// The journal's row for a delivery, or `nil`.
    public func status(of key: DeliveryKey) async throws(StoreError) -> DeliveryStatus? {
        try await StoreError.wrap("DeliveryJournal.status") {
            let rows = try await client.query(
                """
                SELECT delivery_key, message_key, user_id, position, state, attempts, last_error, claimed_at, updated_at
                FROM deliveries WHERE delivery_key = $1
                """,
                [key.rawValue]
            )
            guard let row = rows.first else { return nil }
            let stateName = try row.decode(String.self, column: "state")
            guard let state = DeliveryState(rawValue: stateName) else {
                throw StoreError(code: .schemaMismatch, message: "unknown delivery state \(stateName)")
            }
            return DeliveryStatus(
                deliveryKey: DeliveryKey(rawValue: try row.decode(String.self, column: "delivery_key")),
                messageKey: try row.decode(String.self, column: "message_key"),
                userId: try row.decode(String.self, column: "user_id"),
                position: try row.decode(Int.self, column: "position"),
                state: state,
                attempts: try row.decode(Int.self, column: "attempts"),
                lastError: try row.decode(String?.self, column: "last_error"),
                claimedAt: try row.decode(Date.self, column: "claimed_at"),
                updatedAt: try row.decode(Date.self, column: "updated_at")
            )
        }
    }

    /// Forgets deliveries claimed longer ago than the configured retention, at most `limit`
    /// per call (call again while it returns `limit`). A message redelivered after that would
    /// be sent again, so keep the retention longer than any redelivery can take.
    @discardableResult
    public func expire(limit: Int = 10_000) async throws(StoreError) -> Int {
        try await StoreError.wrap("DeliveryJournal.expire") {
            try await client.execute(
                """
                DELETE FROM deliveries WHERE delivery_key IN (
                    SELECT delivery_key FROM deliveries WHERE claimed_at < now() - make_interval(secs => $1) LIMIT $2)
                """,
                [Int(retention.components.seconds), limit]
            )
        }
    }
}
