import Foundation
import HeraldPostgres

/// What `herald bench` checks of its database before it measures anything. Each run's drain
/// waits until the `backlog` table is empty (acknowledged is not yet sent for a queued
/// delivery), and only the worker that holds the backlog lock sends it:
/// - rows left in `backlog` by an earlier run that did not finish would be sent to this run's
///   sender, or never, and the drain would wait for them (a providers run once failed its check
///   because of such rows); they are refused, or deleted with `--discard-backlog`
///   together with their `queued` journal rows;
/// - another session holding an advisory lock in the database (a worker, or another bench)
///   could hold the backlog lock, and this run's backlog would then not be sent at all.
enum BenchPreflight {
    /// Throws ``BenchError`` naming what is in the way; returns the backlog rows it deleted.
    @discardableResult
    static func check(client: PostgresClient, discardBacklog: Bool) async throws -> Int {
        let locks =
            try await client.query(
                """
                SELECT count(DISTINCT pid)::int8 FROM pg_locks
                WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
                  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """, []
            ).first?.decode(Int.self, at: 0) ?? 0
        if let problem = problem(backlogRows: 0, otherLockHolders: locks, discard: discardBacklog) { throw BenchError(problem) }
        let rows = try await client.query("SELECT count(*)::int8 FROM backlog", []).first?.decode(Int.self, at: 0) ?? 0
        if let problem = problem(backlogRows: rows, otherLockHolders: 0, discard: discardBacklog) { throw BenchError(problem) }
        guard rows > 0 else { return 0 }
        // One statement: the rows and their journal rows go together or not at all.
        try await client.execute(
            """
            WITH gone AS (DELETE FROM backlog RETURNING device_ref, position)
            DELETE FROM journal j USING gone WHERE j.device_ref = gone.device_ref AND j.position = gone.position AND j.state = 'queued'
            """, [])
        return rows
    }

    /// Why the bench must not start, or nil.
    static func problem(backlogRows: Int, otherLockHolders: Int, discard: Bool) -> String? {
        if otherLockHolders > 0 {
            return
                "\(otherLockHolders) other database session\(otherLockHolders == 1 ? " holds" : "s hold") advisory locks in this database (a herald worker, or another bench?): one of them may hold the backlog lock, and the bench's workers would then never send a backlog. Give the bench a scratch database of its own."
        }
        if backlogRows > 0, !discard {
            return
                "the backlog table holds \(backlogRows) deliveries, left by an earlier run that did not finish (or by a worker): the bench waits for the backlog to empty and would wait for them, or send them with its own sender. Give it a scratch database, or add --discard-backlog to delete them and their queued journal rows."
        }
        return nil
    }
}
