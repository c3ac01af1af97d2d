/// The hash that assigns a user to a partition: FNV-1a, 64 bits, over the UTF-8 bytes of the
/// user id.
///
/// Why not Swift's `Hasher`: it is seeded per process, so two workers (or one worker before and
/// after a restart) would send one user to different partitions and lose per-user order. Why not
/// RabbitMQ's consistent-hash exchange: the broker may move keys after a restart (DESIGN.md).
/// FNV-1a is fixed by its definition: every process of every Herald version computes the same
/// partition for a user, as long as the partition count is the same. Pure; thread-safe.
public enum PartitionHash {
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// FNV-1a 64 of `text`'s UTF-8 bytes.
    public static func fnv1a64(_ text: String) -> UInt64 {
        var hash = offsetBasis
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* prime
        }
        return hash
    }

    /// The partition (0 ..< `count`) of user `userId`; `count` must be at least 1.
    public static func partition(ofUser userId: String, count: Int) -> Int {
        precondition(count >= 1, "a partition count is at least 1")
        return Int(fnv1a64(userId) % UInt64(count))
    }
}
