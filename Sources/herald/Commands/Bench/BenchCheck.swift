import Foundation
import HeraldPostgres

/// `herald bench` checks its own work after every run it times: the journal's rows for each of
/// the run's messages against the deliveries the workload says that message makes, no delivery
/// key journaled twice, every row sent, nothing dead-lettered, and the worker's count of sent
/// deliveries equal to the journal's. A throughput figure of a run that lost, doubled or
/// dead-lettered deliveries is not one to write down; any difference fails the bench.
enum BenchCheck {
    /// The journal's rows of one message.
    struct Journaled: Sendable, Equatable {
        var rows: Int
        /// Distinct devices and users: distinct delivery keys (the bench has one app).
        var deliveries: Int
        var notSent: Int
    }

    struct Outcome: Sendable, Equatable {
        var expectedDeliveries: Int
        var journaledDeliveries: Int
        var differences: [String]
    }

    /// The journal's rows of the messages whose keys (``MessageKey/digest``) are `keys`. A run's
    /// messages were created one after another: their id range bounds the journal's BRIN scan.
    static func journal(of keys: [UUID], client: PostgresClient) async throws -> [UUID: Journaled] {
        let rows = try await client.query(
            """
            WITH run AS (SELECT id, key FROM messages WHERE key = ANY($1::uuid[]))
            SELECT run.key, count(*)::int8, count(DISTINCT (j.device_ref, j.user_id))::int8,
                   count(*) FILTER (WHERE j.state <> 'sent')::int8
            FROM run JOIN journal j ON j.message_id = run.id
            WHERE j.message_id BETWEEN (SELECT min(id) FROM run) AND (SELECT max(id) FROM run)
            GROUP BY run.key
            """, [keys])
        var journaled: [UUID: Journaled] = [:]
        for row in rows {
            let key = try row.decode(UUID.self, at: 0)
            let count = try row.decode(Int.self, at: 1), deliveries = try row.decode(Int.self, at: 2), notSent = try row.decode(Int.self, at: 3)
            journaled[key] = Journaled(rows: count, deliveries: deliveries, notSent: notSent)
        }
        return journaled
    }

    /// What differs between the deliveries `expected` per message and the `journaled` rows, with
    /// the messages the worker dead-lettered and the deliveries it counted as sent; at most
    /// `examples` differing messages are named.
    static func compare(expected: [UUID: Int], journaled: [UUID: Journaled], deadLetters: Int, workerSent: Int, examples: Int = 3) -> Outcome {
        var expectedTotal = 0, journaledTotal = 0, doubled = 0, notSent = 0
        var differing: [(key: UUID, expected: Int, journaled: Int)] = []
        for (key, count) in expected {
            let rows = journaled[key] ?? Journaled(rows: 0, deliveries: 0, notSent: 0)
            expectedTotal += count
            journaledTotal += rows.deliveries
            doubled += rows.rows - rows.deliveries
            notSent += rows.notSent
            if rows.deliveries != count { differing.append((key, count, rows.deliveries)) }
        }
        var differences: [String] = []
        if !differing.isEmpty {
            let named = differing.sorted { $0.key.uuidString < $1.key.uuidString }.prefix(examples)
                .map { "message \($0.key.uuidString.lowercased()): \($0.journaled) of \($0.expected)" }
            differences.append(
                "\(differing.count) messages with other deliveries in the journal than the workload makes (\(journaledTotal) journaled, \(expectedTotal) expected), e.g. \(named.joined(separator: "; "))"
            )
        }
        if doubled > 0 { differences.append("\(doubled) journal rows repeat a delivery key") }
        if notSent > 0 { differences.append("\(notSent) journal rows are not sent") }
        if deadLetters > 0 { differences.append("\(deadLetters) messages dead-lettered") }
        if workerSent != journaledTotal { differences.append("the worker counted \(workerSent) deliveries sent, the journal holds \(journaledTotal)") }
        return Outcome(expectedDeliveries: expectedTotal, journaledDeliveries: journaledTotal, differences: differences)
    }
}
