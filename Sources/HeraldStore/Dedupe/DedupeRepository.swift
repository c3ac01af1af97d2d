import HeraldPostgres

/// Remembers event dedupe keys (seed 000's `AvoidDublication`) for the configured retention,
/// so that an event published twice is delivered once.
///
/// One statement per call (an `INSERT … ON CONFLICT` over an array): one round trip per batch,
/// atomic. Safe from any number of tasks: of two concurrent calls with the same new key,
/// exactly one sees it first (keys are inserted in sorted order, so that concurrent batches
/// wait for each other instead of deadlocking). Throws ``StoreError``.
public struct DedupeRepository: Sendable {
    let client: PostgresClient
    let retention: Duration

    init(client: PostgresClient, retention: Duration) {
        self.client = client
        self.retention = retention
    }

    /// For each key, in order, whether this is its first sighting (it is then remembered). A
    /// key seen before whose retention has run out counts as new again. A key repeated within
    /// `keys` is first seen only at its first position.
    public func firstSeen(_ keys: [String]) async throws(StoreError) -> [Bool] {
        guard !keys.isEmpty else { return [] }
        var unique: [String] = []
        var seen = Set<String>()
        unique.reserveCapacity(keys.count)
        for key in keys where seen.insert(key).inserted { unique.append(key) }
        let retentionSeconds = Int(retention.components.seconds)
        let fresh: Set<String> = try await StoreError.wrap("DedupeRepository.firstSeen") {
            let rows = try await client.query(
                """
                INSERT INTO dedupe_keys AS k (key, first_seen, expires_at)
                SELECT key, now(), now() + make_interval(secs => $2) FROM unnest($1::text[]) AS key ORDER BY key
                ON CONFLICT (key) DO UPDATE SET first_seen = EXCLUDED.first_seen, expires_at = EXCLUDED.expires_at
                    WHERE k.expires_at <= now()
                RETURNING key
                """,
                [unique, retentionSeconds]
            )
            var fresh = Set<String>(minimumCapacity: rows.count)
            for row in rows { fresh.insert(try row.decode(String.self, at: 0)) }
            return fresh
        }
        var answered = Set<String>(minimumCapacity: keys.count)
        return keys.map { key in fresh.contains(key) && answered.insert(key).inserted }
    }

    /// Deletes expired keys, at most `limit` per call; returns how many.
    @discardableResult
    public func expire(limit: Int = 10_000) async throws(StoreError) -> Int {
        try await StoreError.wrap("DedupeRepository.expire") {
            try await client.execute(
                "DELETE FROM dedupe_keys WHERE key IN (SELECT key FROM dedupe_keys WHERE expires_at <= now() LIMIT $1)",
                [limit]
            )
        }
    }
}
