import HeraldPostgres
import Logging
import Synchronization

/// Who queues and sends the backlog (``DeliveryBacklog``): the one worker that holds this
/// PostgreSQL advisory lock, on a connection of its own. PostgreSQL releases it when that
/// session ends (the worker stops, is killed, or loses the database), so another worker can
/// take the backlog over without any protocol of Herald's own. Places in an order are numbered
/// by the holder alone, which is what keeps them in order.
///
/// Every take adds one to a generation in the database (`backlog_holder`, migration 9): a holder
/// that lost the lock and takes it again learns whether another worker held it meanwhile.
public final class BacklogLock: Sendable {
    /// What a try to take the lock found.
    public enum Take: Sendable, Equatable {
        /// This worker holds it, in this generation.
        case held(generation: Int64)
        /// Another worker holds it.
        case heldElsewhere
        /// The database could not be asked (it is restarting, or unreachable).
        case unknown
    }

    /// The lock's key: "herald.b" as a 64-bit number.
    static let key = 0x6865_7261_6c64_2e62

    private let connection: PostgresConnection
    /// The generation of this worker's current take.
    private let generation = Mutex<Int64?>(nil)

    init(client: PostgresClient) {
        connection = client.makeDedicatedConnection(label: "backlog-lock", deadPeer: PartitionLocks.deadPeer)
    }

    /// Takes the lock if nobody holds it.
    public func acquire() async -> Take {
        do {
            if try await isHeldNow(), let current = generation.withLock({ $0 }) { return .held(generation: current) }
            guard try await connection.query("SELECT pg_try_advisory_lock($1)", [Self.key]).first?.decode(Bool.self, at: 0) == true else {
                return .heldElsewhere
            }
            let taken = try? await connection.query(
                """
                INSERT INTO backlog_holder (id, generation) VALUES (1, 1)
                ON CONFLICT (id) DO UPDATE SET generation = backlog_holder.generation + 1 RETURNING generation
                """
            ).first?.decode(Int64.self, at: 0)
            guard let taken else {
                // Held without a generation, a later take could not tell whether it resumed.
                await release()
                return .unknown
            }
            generation.withLock { $0 = taken }
            return .held(generation: taken)
        } catch {
            return .unknown
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
