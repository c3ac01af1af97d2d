import HeraldPostgres
import Logging

/// Who queues and sends the backlog (``DeliveryBacklog``): the one worker that holds this
/// PostgreSQL advisory lock, on a connection of its own. PostgreSQL releases it when that
/// session ends (the worker stops, is killed, or loses the database), so another worker can
/// take the backlog over without any protocol of Herald's own. Places in an order are numbered
/// by the holder alone, which is what keeps them in order.
public final class BacklogLock: Sendable {
    /// The lock's key: "herald.b" as a 64-bit number.
    static let key = 0x6865_7261_6c64_2e62

    private let connection: PostgresConnection

    init(client: PostgresClient) {
        connection = client.makeDedicatedConnection(label: "backlog-lock")
    }

    /// Takes the lock if nobody holds it; true if this worker holds it now.
    public func acquire() async -> Bool {
        do {
            if try await isHeldNow() { return true }
            return try await connection.query("SELECT pg_try_advisory_lock($1)", [Self.key]).first?.decode(Bool.self, at: 0) ?? false
        } catch {
            return false
        }
    }

    /// Whether this worker still holds the lock: false once its session was lost (a database
    /// restart, a broken connection), even if the connection has been repaired since.
    public func isHeld() async -> Bool {
        (try? await isHeldNow()) ?? false
    }

    private func isHeldNow() async throws(PostgresError) -> Bool {
        let rows = try await connection.query(
            """
            SELECT count(*) FROM pg_locks
            WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
              AND ((classid::bigint << 32) | objid::bigint) = $1
            """, [Self.key])
        return try (rows.first?.decode(Int.self, at: 0) ?? 0) > 0
    }

    /// Gives the lock up and keeps the session (another worker may take it).
    public func release() async {
        _ = try? await connection.query("SELECT pg_advisory_unlock($1)", [Self.key])
    }

    /// Gives the lock up (the session ends).
    public func close() async {
        await connection.close()
    }
}
