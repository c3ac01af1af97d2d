import HeraldPostgres

/// Who is a worker of a partitioned installation, and who owns which partition: PostgreSQL
/// advisory locks, held on one session of their own per worker process.
///
/// A worker holds a *member* lock (namespace ``Keys/members``, its session's backend pid) while
/// it can consume, and one *partition* lock (namespace ``Keys/partitions``, the partition) for
/// each partition it owns. ``view()`` reads them all from `pg_locks`. PostgreSQL releases a
/// session's locks when it ends (the process stops, is killed, or loses the database), so the
/// others see it gone at their next look, without any protocol of Herald's own. The two-key form
/// of the locks never meets the one-key form (`BacklogLock`, migrations); locks are per
/// database.
///
/// Thread rules: `Sendable`; the worker's one balancing task calls it, one statement at a time.
public final class PartitionLocks: Sendable {
    /// The two lock namespaces of one installation (derived from its queue name by the caller,
    /// so that two installations sharing a database do not meet), each 0 ..< 2³¹.
    public struct Keys: Sendable, Hashable {
        public let members: Int32
        public let partitions: Int32

        public init(members: Int32, partitions: Int32) {
            precondition(members >= 0 && partitions >= 0 && members != partitions, "two distinct non-negative namespaces")
            self.members = members
            self.partitions = partitions
        }
    }

    /// What `pg_locks` says, read in one statement.
    public struct View: Sendable, Equatable {
        /// This worker's session (its backend pid).
        public var me: Int32
        /// The sessions holding a member lock.
        public var members: Set<Int32>
        /// Each partition held, by the session that holds it.
        public var owners: [Int: Int32]

        /// The partitions this worker holds.
        public var mine: Set<Int> { Set(owners.filter { $0.value == me }.keys) }
    }

    public let keys: Keys
    private let connection: PostgresConnection
    /// Within about this long of a network cut, PostgreSQL ends a lock session (its locks go to
    /// the others) and its process's statements fail (it gives its partitions up).
    static let deadPeer: Duration = .seconds(10)

    init(client: PostgresClient, keys: Keys) {
        self.keys = keys
        connection = client.makeDedicatedConnection(label: "partition-locks", deadPeer: Self.deadPeer)
    }

    /// Reads every member and partition lock of this installation.
    /// - Throws: ``StoreError`` (the database cannot be asked).
    public func view() async throws(StoreError) -> View {
        let rows: PostgresQueryResult
        do {
            rows = try await connection.query(
                """
                SELECT pg_backend_pid(), l.classid::bigint, l.objid::bigint, l.pid
                FROM (SELECT 1) AS one
                LEFT JOIN pg_locks AS l ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND l.classid::bigint IN ($1, $2)
                """, [Int(keys.members), Int(keys.partitions)])
        } catch {
            throw StoreError(error, operation: "PartitionLocks.view")
        }
        var view = View(me: 0, members: [], owners: [:])
        do {
            for row in rows {
                view.me = try row.decode(Int32.self, at: 0)
                guard let namespace = try row.decode(Int?.self, at: 1), let key = try row.decode(Int?.self, at: 2),
                    let pid = try row.decode(Int32?.self, at: 3)
                else { continue }
                if namespace == Int(keys.members) { view.members.insert(pid) } else { view.owners[key] = pid }
            }
        } catch {
            throw StoreError(error, operation: "PartitionLocks.view")
        }
        return view
    }

    /// Takes this worker's member lock unless it holds it; true when it holds it afterwards.
    /// - Throws: ``StoreError``.
    public func join() async throws(StoreError) -> Bool {
        try await flag(
            """
            SELECT EXISTS (
                SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND pid = pg_backend_pid()
                  AND classid::bigint = $1 AND objid::bigint = pg_backend_pid()
            ) OR pg_try_advisory_lock($2, pg_backend_pid())
            """, [Int(keys.members), keys.members], operation: "PartitionLocks.join")
    }

    /// Takes partition `partition`'s lock if nobody holds it (this worker must not hold it:
    /// advisory locks count, and one unlock would then not release it). True when taken.
    /// - Throws: ``StoreError``.
    public func take(_ partition: Int) async throws(StoreError) -> Bool {
        try await flag("SELECT pg_try_advisory_lock($1, $2)", [keys.partitions, Int32(partition)], operation: "PartitionLocks.take")
    }

    /// Releases partition `partition`'s lock (nothing when this worker does not hold it).
    /// - Throws: ``StoreError``.
    public func release(_ partition: Int) async throws(StoreError) {
        _ = try await flag("SELECT pg_advisory_unlock($1, $2)", [keys.partitions, Int32(partition)], operation: "PartitionLocks.release")
    }

    /// Releases every lock of this worker (it cannot consume: its broker connection is gone) and
    /// keeps the session. Best effort: when the database cannot be asked, the session is
    /// usually gone already, and its locks with it; a worker that finds locks it still holds
    /// when it consumes again consumes their partitions.
    public func releaseAll() async {
        _ = try? await connection.query("SELECT pg_advisory_unlock_all()")
    }

    /// Releases every lock (the session ends).
    public func close() async {
        await connection.close()
    }

    private func flag(_ sql: String, _ parameters: [any PostgresBindable], operation: String) async throws(StoreError) -> Bool {
        do {
            return try await connection.query(sql, parameters).first?.decode(Bool.self, at: 0) == true
        } catch {
            throw StoreError(error, operation: operation)
        }
    }
}

extension Store {
    /// The partition locks of an installation (``PartitionLocks``), none taken yet; their session
    /// is their own.
    public func makePartitionLocks(keys: PartitionLocks.Keys) -> PartitionLocks {
        PartitionLocks(client: client, keys: keys)
    }
}
