import Foundation
import HeraldPostgres

/// The record of dead-lettered messages (`herald dlq list|replay`): the message itself stays
/// in RabbitMQ's dead-letter queue; this keeps the reason and whether it was replayed. Safe
/// from any number of tasks. Throws ``StoreError``.
public struct DeadLetterRepository: Sendable {
    let client: PostgresClient

    /// Records a dead letter; recording the same id again changes nothing.
    public func record(_ letter: DeadLetter) async throws(StoreError) {
        try await StoreError.wrap("DeadLetterRepository.record") {
            try await client.execute(
                """
                INSERT INTO dead_letters (id, message_key, queue, error_code, reason, event_id, created_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (id) DO NOTHING
                """,
                [letter.id, letter.messageKey, letter.queue, letter.errorCode, letter.reason, letter.eventId, letter.createdAt]
            )
        }
    }

    /// Dead letters, newest first; replayed ones only with `includeReplayed`.
    public func list(limit: Int = 100, includeReplayed: Bool = false) async throws(StoreError) -> [DeadLetter] {
        try await StoreError.wrap("DeadLetterRepository.list") {
            let rows = try await client.query(
                """
                SELECT \(Self.columns) FROM dead_letters
                WHERE $1 OR replayed_at IS NULL
                ORDER BY created_at DESC, id
                LIMIT $2
                """,
                [includeReplayed, limit]
            )
            return try rows.map { (row) throws(PostgresError) in try Self.letter(row) }
        }
    }

    /// The columns ``letter(_:)`` reads.
    static let columns = "id, message_key, queue, error_code, reason, event_id, created_at, replayed_at"

    /// A `dead_letters` row (``columns``, selected by name).
    static func letter(_ row: PostgresRow) throws(PostgresError) -> DeadLetter {
        DeadLetter(
            id: try row.decode(String.self, column: "id"),
            messageKey: try row.decode(String?.self, column: "message_key"),
            queue: try row.decode(String.self, column: "queue"),
            errorCode: try row.decode(String.self, column: "error_code"),
            reason: try row.decode(String.self, column: "reason"),
            eventId: try row.decode(String?.self, column: "event_id"),
            createdAt: try row.decode(Date.self, column: "created_at"),
            replayedAt: try row.decode(Date?.self, column: "replayed_at")
        )
    }

    /// Marks a dead letter replayed. Returns whether it existed and was not replayed before.
    @discardableResult
    public func markReplayed(id: String) async throws(StoreError) -> Bool {
        try await StoreError.wrap("DeadLetterRepository.markReplayed") {
            try await client.execute("UPDATE dead_letters SET replayed_at = now() WHERE id = $1 AND replayed_at IS NULL", [id]) > 0
        }
    }
}
