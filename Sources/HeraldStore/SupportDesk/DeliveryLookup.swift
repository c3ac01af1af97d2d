import Foundation
import HeraldCore
import HeraldPostgres

/// Answers a support desk's question, "did user X get the push for message Y?", from the
/// journal and the dead-letter record (`herald deliveries`, `GET /v1/admin/…`). Read-only and
/// off the hot path: every answer is a few index lookups.
///
/// How long an answer stays: a message's row for the longer of the journal retention and the
/// `AvoidDublication` window, its deliveries for the longer of the journal and notification-log
/// retentions (``StoreConfiguration``); dead letters until deleted. A message older than that
/// is `unknown`. Safe from any number of tasks. Throws ``StoreError``.
public struct DeliveryLookup: Sendable {
    let client: PostgresClient

    /// Everything known of the message with this key (AMQP `message-id`, or the SHA-256 of
    /// the body when the producer set none). With `partitions` = K > 0 (`worker.partitions`),
    /// the K partition copies are looked up too.
    public func message(key: String, partitions: Int = 0) async throws(StoreError) -> MessageReport {
        var keys = [MessageKey(text: key)]
        if partitions > 0 {
            for p in 0..<partitions { keys.append(MessageKey(text: key, partitionSuffix: "#p\(p)/\(partitions)")) }
        }
        let suffixes = Dictionary(keys.map { ($0.digest, $0.partitionSuffix) }, uniquingKeysWith: { first, _ in first })
        return try await StoreError.wrap("DeliveryLookup.message") {
            let messageRows = try await client.query(
                "SELECT id, key, received_at, event_id, planned, repeats, last_repeat_at FROM messages WHERE key = ANY($1::uuid[]) ORDER BY id",
                [keys.map(\.digest)]
            )
            var copies: [(id: Int, copy: MessageReport.Copy)] = []
            for row in messageRows {
                copies.append(
                    (
                        try row.decode(Int.self, column: "id"),
                        MessageReport.Copy(
                            partition: suffixes[try row.decode(UUID.self, column: "key")] ?? "",
                            receivedAt: try row.decode(Date.self, column: "received_at"),
                            eventId: try row.decode(String?.self, column: "event_id"),
                            planned: try row.decode(Int?.self, column: "planned"),
                            repeats: try row.decode(Int?.self, column: "repeats") ?? 0,
                            lastRepeatAt: try row.decode(Date?.self, column: "last_repeat_at"),
                            claimedWithoutOutcome: 0
                        )
                    ))
            }
            var deliveries: [SupportDelivery] = []
            if !copies.isEmpty {
                let rows = try await client.query(
                    """
                    SELECT \(Self.columns), j.message_id
                    FROM journal j JOIN messages m ON m.id = j.message_id LEFT JOIN devices d ON d.id = j.device_ref
                    WHERE j.message_id = ANY($1::int8[])
                    ORDER BY j.user_id, j.device_ref, j.position
                    """,
                    [copies.map(\.id)]
                )
                var recorded: [Int: Int] = [:]
                for row in rows {
                    deliveries.append(try Self.delivery(row))
                    recorded[try row.decode(Int.self, column: "message_id"), default: 0] += 1
                }
                let broadcasts = try await BroadcastRepository.progress(of: copies.map { Int64($0.id) }, client: client)
                for index in copies.indices {
                    let planned = copies[index].copy.planned ?? 0
                    copies[index].copy.claimedWithoutOutcome = max(0, planned - (recorded[copies[index].id] ?? 0))
                    copies[index].copy.broadcast = broadcasts[Int64(copies[index].id)]
                }
            }
            let letterRows = try await client.query(
                """
                SELECT \(DeadLetterRepository.columns) FROM dead_letters
                WHERE message_key = $1 ORDER BY created_at, id
                """,
                [key]
            )
            let letters = try letterRows.map { (row) throws(PostgresError) in try DeadLetterRepository.letter(row) }
            return MessageReport(messageKey: key, copies: copies.map(\.copy), deliveries: deliveries, deadLetters: letters)
        }
    }

    /// The deliveries to a user's devices (addressed to the user, or broadcast) recorded since
    /// `since`, newest first, at most `limit`. Through the user's current devices: the journal
    /// rows of a device the user has left are not listed.
    public func deliveries(userId: String, since: Date, limit: Int = 100) async throws(StoreError) -> UserDeliveriesReport {
        try await StoreError.wrap("DeliveryLookup.deliveries") {
            let rows = try await client.query(
                """
                SELECT \(Self.columns)
                FROM device_users du JOIN journal j ON j.device_ref = du.device_ref
                LEFT JOIN messages m ON m.id = j.message_id LEFT JOIN devices d ON d.id = j.device_ref
                WHERE du.user_id = $1 AND j.user_id IN ($1, '0') AND j.recorded_at >= $2
                ORDER BY j.recorded_at DESC, j.device_ref, j.position DESC
                LIMIT $3
                """,
                [userId, since, limit + 1]
            )
            let deliveries = try rows.map { (row) throws(PostgresError) in try Self.delivery(row) }
            return UserDeliveriesReport(userId: userId, since: since, deliveries: Array(deliveries.prefix(limit)), hasMore: deliveries.count > limit)
        }
    }

    /// What ``DeliveryJournal/status(_:)`` reads, and the device's token.
    static let columns = DeliveryJournal.statusColumns + ", d.token"

    static func delivery(_ row: PostgresRow) throws(PostgresError) -> SupportDelivery {
        SupportDelivery(status: try DeliveryJournal.status(row), shortToken: try row.decode(String?.self, column: "token").map(LogKey.shortToken))
    }
}
