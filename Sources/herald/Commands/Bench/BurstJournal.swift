import Foundation
import HeraldPostgres

/// What the journal holds for each device of a burst run, read in one statement (aggregated
/// in PostgreSQL: a million deliveries stay there): its rows, how many are `sent`, how many
/// distinct places (the message id's last number, ``BurstWorkload/messageId(_:_:)``), how many
/// positions hold an earlier place than the position before them (positions are given in the
/// order the deliveries were claimed, so the user's pushes must be numbered in the order they
/// were published), when the first and last were recorded, and its rows still in the backlog.
enum BurstJournal {
    struct Device: Sendable, Equatable {
        var rows = 0
        var sent = 0
        var distinct = 0
        var misnumbered = 0
        var firstRecorded: Date?
        var lastRecorded: Date?
        var backlog = 0
    }

    /// By device id.
    static func read(_ workload: BurstWorkload, client: PostgresClient) async throws -> [String: Device] {
        let rows = try await client.query(
            """
            WITH d AS (SELECT id, device_id FROM devices WHERE device_id LIKE $1),
            r AS (
                SELECT j.device_ref, j.position, j.state, j.recorded_at,
                       substring(m.key_text FROM '-([0-9]+)$')::int8 AS k
                FROM d JOIN journal j ON j.device_ref = d.id LEFT JOIN messages m ON m.id = j.message_id
            ),
            o AS (SELECT *, lag(k) OVER (PARTITION BY device_ref ORDER BY position) AS previous FROM r)
            SELECT d.device_id, count(o.device_ref)::int8, (count(*) FILTER (WHERE o.state = 'sent'))::int8,
                   count(DISTINCT o.k)::int8, (count(*) FILTER (WHERE o.previous IS NOT NULL AND o.k <= o.previous))::int8,
                   min(o.recorded_at), max(o.recorded_at),
                   (SELECT count(*) FROM backlog b WHERE b.device_ref = d.id)::int8
            FROM d LEFT JOIN o ON o.device_ref = d.id
            GROUP BY d.id, d.device_id
            """, [workload.devicePrefix + "%"])
        var devices: [String: Device] = [:]
        for row in rows {
            var device = Device()
            device.rows = try row.decode(Int.self, at: 1)
            device.sent = try row.decode(Int.self, at: 2)
            device.distinct = try row.decode(Int.self, at: 3)
            device.misnumbered = try row.decode(Int.self, at: 4)
            device.firstRecorded = try row.decode(Date?.self, at: 5)
            device.lastRecorded = try row.decode(Date?.self, at: 6)
            device.backlog = try row.decode(Int.self, at: 7)
            devices[try row.decode(String.self, at: 0)] = device
        }
        return devices
    }

    /// What differs between the journal and the workload (every push journaled once and `sent`,
    /// positions in publication order, nothing left in the backlog) and the worker's counts.
    static func differences(
        _ devices: [String: Device], workload: BurstWorkload, workerSent: Int, deadLetters: Int, failed: Int
    ) -> [String] {
        var out: [String] = []
        var journaled = 0, notJournaled = 0, notSent = 0, repeated = 0, misnumbered = 0, backlog = 0
        var example: [String: String] = [:]
        func note(_ kind: String, _ count: Int, _ user: BurstWorkload.User) {
            if count > 0, example[kind] == nil { example[kind] = " (e.g. \(workload.userId(user)))" }
        }
        for user in workload.users {
            let device = devices[workload.deviceId(user)] ?? Device()
            let expected = workload.pushes(user)
            journaled += device.distinct
            notJournaled += max(0, expected - device.distinct)
            note("missing", expected - device.distinct, user)
            notSent += device.rows - device.sent
            note("notSent", device.rows - device.sent, user)
            repeated += device.rows - device.distinct
            note("repeated", device.rows - device.distinct, user)
            misnumbered += device.misnumbered
            note("misnumbered", device.misnumbered, user)
            backlog += device.backlog
        }
        if notJournaled > 0 { out.append("\(notJournaled) pushes are not in the journal\(example["missing"] ?? "")") }
        if notSent > 0 { out.append("\(notSent) journal rows are not sent\(example["notSent"] ?? "")") }
        if repeated > 0 { out.append("\(repeated) journal rows repeat a push\(example["repeated"] ?? "")") }
        if misnumbered > 0 { out.append("\(misnumbered) positions hold an earlier push than the position before\(example["misnumbered"] ?? "")") }
        if backlog > 0 { out.append("\(backlog) of the run's deliveries are still in the backlog table") }
        if deadLetters > 0 { out.append("\(deadLetters) messages dead-lettered") }
        if failed > 0 { out.append("\(failed) deliveries failed") }
        if workerSent != journaled { out.append("the worker counted \(workerSent) deliveries sent, the journal holds \(journaled)") }
        return out
    }
}
