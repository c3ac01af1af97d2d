import HeraldStore

/// How many of the K partitions each live worker process should own, and what one process does
/// about its own: the arithmetic of fair-share ownership, without any I/O (the locks it reads
/// are ``HeraldStore/PartitionLocks``).
///
/// With N members each share is K / N, and the K mod N partitions left over go to the members
/// that own the most right now (ties: the lower session id), so that the shares add up to K,
/// every member owns ⌊K/N⌋ or ⌈K/N⌉, and as few partitions move as possible. Every member
/// computes the same shares from the same locks; a member acting on an older look at worst
/// takes nothing (the partition it wanted is taken: its lock is refused) or hands over one
/// too many, which a member below its share takes at its next look. Pure; thread-safe.
enum PartitionShare {
    /// What one member does now.
    enum Step: Equatable {
        /// Owns its share, or waits for others to hand partitions over.
        case stay
        /// Below its share: take up to `count` of `free` (partitions nobody holds).
        case take(count: Int, free: [Int])
        /// Above its share: hand these over, one after the other.
        case release([Int])
    }

    /// Each member's share. `owned`: every member (by session id) with how many partitions it
    /// holds now. Empty when there is no member.
    static func shares(partitions: Int, owned: [Int32: Int]) -> [Int32: Int] {
        guard !owned.isEmpty else { return [:] }
        let base = partitions / owned.count
        let extra = partitions % owned.count
        let ranked = owned.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        var shares: [Int32: Int] = [:]
        for (rank, member) in ranked.enumerated() { shares[member.key] = base + (rank < extra ? 1 : 0) }
        return shares
    }

    /// What this worker (`view.me`) does, given the locks it read. A worker that is not a
    /// member (it has not joined, or lost its session) stays.
    static func step(_ view: PartitionLocks.View, partitions: Int) -> Step {
        guard view.members.contains(view.me) else { return .stay }
        var owned = Dictionary(uniqueKeysWithValues: view.members.map { ($0, 0) })
        for owner in view.owners.values where owned[owner] != nil { owned[owner, default: 0] += 1 }
        let share = shares(partitions: partitions, owned: owned)[view.me] ?? 0
        let mine = view.mine.filter { (0..<partitions).contains($0) }.sorted()
        if mine.count > share { return .release(Array(mine.suffix(mine.count - share))) }
        let free = (0..<partitions).filter { view.owners[$0] == nil }
        if mine.count < share, !free.isEmpty { return .take(count: share - mine.count, free: free) }
        return .stay
    }
}
