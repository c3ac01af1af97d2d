import HeraldCore
import HeraldStore
import HeraldSupport
import Synchronization

/// Every deliverable subscription, for broadcasts (`UserId 0`, News without a UserId), while
/// they are at most ``WorkerConfiguration/broadcastMemoryLimit`` (past it, broadcasts go in
/// windows: ``BroadcastRunner``), read a page at a time and reused until a subscription changes (the store's change notifications,
/// through ``HeraldStore/SubscriptionCache/changeStamp``), so that broadcasts read the table once
/// while nothing changes; at most ``ttl`` after a change, or while notifications are not
/// flowing, it is read again. A subscription added meanwhile misses at most that long; dead
/// tokens are caught by the worker's ``DeadTokenRegistry`` and the journal. Thread-safe.
///
/// The subscriptions are also indexed by branch and by zone: a broadcast that names branches
/// (or zones) can only reach subscriptions in one of them (a subscription without a branch
/// does not match an event that names branches), so only those are handed to the selector,
/// which still applies every rule.
///
/// And by user: while the snapshot is known current (``current()``), targeted events take their
/// users' subscriptions from it rather than reading them from the database again (each chunk's
/// read of its uncached users: docs/performance.md, "Targeted events from the broadcast
/// audience").
final class BroadcastAudience: Sendable {
    struct Snapshot: Sendable {
        let all: [Subscription]
        let byBranch: [String: [Subscription]]
        let byZone: [String: [Subscription]]
        /// Each user's subscriptions as a range of ``all`` (the pages come ordered by user); nil
        /// when a user's subscriptions were not contiguous after all. Keyed by hashed user ids
        /// (``HeraldSupport/Prehashed``): probing a table of 10,000s of users then compares
        /// stored hashes, not the ids' bytes.
        let byUser: [Prehashed<String>: Range<Int>]?

        init(_ all: [Subscription]) {
            self.all = all
            var byBranch: [String: [Subscription]] = [:]
            var byZone: [String: [Subscription]] = [:]
            var byUser: [Prehashed<String>: Range<Int>]? = [:]
            var start = 0
            for (index, subscription) in all.enumerated() {
                if let branch = subscription.branchId { byBranch[branch, default: []].append(subscription) }
                if let zone = subscription.zoneId { byZone[zone, default: []].append(subscription) }
                if index + 1 == all.count || all[index + 1].userId != subscription.userId {
                    if byUser?.updateValue(start..<index + 1, forKey: Prehashed(subscription.userId)) != nil { byUser = nil }
                    start = index + 1
                }
            }
            self.byBranch = byBranch
            self.byZone = byZone
            self.byUser = byUser
        }

        /// Whether ``subscriptions(ofUser:)`` can answer.
        var indexesUsers: Bool { byUser != nil }

        /// One user's subscriptions, as ``HeraldStore/SubscriptionCache`` answers them; a slice
        /// of ``all``, so that a chunk's lookups copy nothing. Empty without the index by user.
        func subscriptions(ofUser user: String) -> ArraySlice<Subscription> {
            guard let range = byUser?[Prehashed(user)] else { return [] }
            return all[range]
        }

        /// The subscriptions that can match `event`'s branch and zone filters, in an order that
        /// depends only on the snapshot and the event (branches and zones sorted, not in `Set`
        /// order, which differs between processes): the partitions of a broadcast, each
        /// selecting once per device from this list, must pick the same subscription of a device.
        func candidates(for event: Event) -> [Subscription] {
            let branches = Set(event.filterValues(.branchId)).sorted()
            if !branches.isEmpty { return branches.flatMap { byBranch[$0] ?? [] } }
            let zones = Set(event.filterValues(.zoneId)).sorted()
            if !zones.isEmpty { return zones.flatMap { byZone[$0] ?? [] } }
            return all
        }
    }

    private let devices: DeviceRepository
    private let changes: SubscriptionCache
    private let ttl: Duration
    private let limit: Int
    /// The last read; a nil snapshot: more than ``limit`` subscriptions.
    private let cached = Mutex<(loaded: ContinuousClock.Instant, stamp: UInt64?, snapshot: Snapshot?)?>(nil)

    /// `limit`: the most subscriptions held in memory (``WorkerConfiguration/broadcastMemoryLimit``).
    init(devices: DeviceRepository, changes: SubscriptionCache, ttl: Duration, limit: Int) {
        self.devices = devices
        self.changes = changes
        self.ttl = ttl
        self.limit = limit
    }

    /// The snapshot when it is known current: reuse is on (``ttl`` > 0), it was loaded while the
    /// change notifications flow, and none arrived since its load began (any change to any
    /// subscription counts). Then it answers as a database read would now; nil otherwise, or
    /// before the first broadcast.
    func current() -> Snapshot? {
        guard ttl > .zero, let stamp = changes.changeStamp, let hit = cached.withLock({ $0 }), hit.stamp == stamp else { return nil }
        return hit.snapshot
    }

    /// The current snapshot, or one read less than ``ttl`` ago, or a new one; nil when there
    /// are more than ``limit`` subscriptions (broadcasts then go in windows), known without a
    /// read while nothing changed since.
    func snapshot() async throws(StoreError) -> Snapshot? {
        if let current = current() { return current }
        guard limit > 0 else { return nil }
        let now = ContinuousClock.now
        let stamp = changes.changeStamp
        if ttl > .zero, let hit = cached.withLock({ $0 }), now - hit.loaded < ttl || (stamp != nil && hit.stamp == stamp) {
            return hit.snapshot
        }
        // Far more than the limit by the statistics: known without reading them.
        if let estimate = try await devices.estimatedSubscriptionCount(), estimate > limit * 2 {
            cached.withLock { $0 = (now, stamp, nil) }
            return nil
        }
        var all: [Subscription] = []
        var cursor: SubscriptionPage.Cursor?
        repeat {
            let page = try await devices.allSubscriptions(after: cursor, limit: 5_000)
            all.append(contentsOf: page.subscriptions)
            cursor = page.next
            if all.count > limit {
                cached.withLock { $0 = (now, stamp, nil) }
                return nil
            }
        } while cursor != nil
        let snapshot = Snapshot(all)
        cached.withLock { $0 = (now, stamp, snapshot) }
        return snapshot
    }
}
