import HeraldCore
import Synchronization

/// The worker's in-memory view of subscriptions: user id → the user's deliverable
/// subscriptions (possibly none), so that the hot path does not query per message.
///
/// Misses are loaded in one query for all missing users of a call. Bounded: at most
/// `capacity` users, evicting the least recently used approximately (two generations: when
/// the young one is full it becomes the old one and the previous old one is dropped; a hit in
/// the old generation moves the user back to the young).
///
/// Freshness: entries are invalidated per user by `herald_devices` notifications (fed by
/// ``StoreChangeListener``), and all at once when the listener reconnects. Entries are kept
/// only while the listener is connected (``setLive(_:)``): without it, every call reads the
/// database. A load that was running when a user was invalidated does not store that user's
/// (possibly stale) result; a load running during a full invalidation stores nothing.
///
/// Thread-safe (a `Mutex`); ``subscriptions(forUsers:)`` may be called from any number of
/// tasks. Throws ``StoreError`` from the load.
public final class SubscriptionCache: Sendable {
    /// Loads the subscriptions of the given users (``DeviceRepository/subscriptions(forUsers:)``).
    public typealias Loader = @Sendable ([String]) async throws(StoreError) -> [Subscription]

    public let capacity: Int
    private let loader: Loader
    private let state: Mutex<State>

    struct State {
        var young: [String: [Subscription]] = [:]
        var old: [String: [Subscription]] = [:]
        var live = false
        /// Loads in flight: id → users invalidated while it ran.
        var loads: [UInt64: Set<String>] = [:]
        var nextLoad: UInt64 = 0
        var hits = 0
        var misses = 0
        /// Invalidations so far (of one user, of everyone, or a change of liveness).
        var changes: UInt64 = 0
    }

    /// Counters for metrics.
    public struct Statistics: Sendable, Hashable {
        public var users: Int
        public var hits: Int
        public var misses: Int
        public var isLive: Bool
    }

    public init(capacity: Int, loader: @escaping Loader) {
        self.capacity = max(2, capacity)
        self.loader = loader
        self.state = Mutex(State())
    }

    /// The subscriptions of each of `userIds` (every one is a key of the result; users without
    /// subscriptions map to `[]`). At most one database query per call.
    public func subscriptions(forUsers userIds: some Sequence<String>) async throws(StoreError) -> [String: [Subscription]] {
        var result: [String: [Subscription]] = [:]
        let (missing, load): ([String], UInt64?) = state.withLock { state in
            var missing: [String] = []
            for user in userIds where result[user] == nil {
                if let hit = state.young[user] {
                    result[user] = hit
                } else if let hit = state.old.removeValue(forKey: user) {
                    result[user] = hit
                    Self.insert(user, hit, into: &state, capacity: capacity)
                } else {
                    missing.append(user)
                    result[user] = []
                }
            }
            state.hits += result.count - missing.count
            state.misses += missing.count
            guard !missing.isEmpty, state.live else { return (missing, nil) }
            state.nextLoad += 1
            state.loads[state.nextLoad] = []
            return (missing, state.nextLoad)
        }
        guard !missing.isEmpty else { return result }
        let loaded: [Subscription]
        do {
            loaded = try await loader(missing)
        } catch {
            if let load { state.withLock { _ = $0.loads.removeValue(forKey: load) } }
            throw error
        }
        var byUser: [String: [Subscription]] = [:]
        for user in missing { byUser[user] = [] }
        for subscription in loaded { byUser[subscription.userId, default: []].append(subscription) }
        if let load {
            state.withLock { state in
                guard let invalidated = state.loads.removeValue(forKey: load), state.live else { return }
                for (user, subscriptions) in byUser where !invalidated.contains(user) {
                    Self.insert(user, subscriptions, into: &state, capacity: capacity)
                }
            }
        }
        result.merge(byUser) { _, loaded in loaded }
        return result
    }

    /// Drops one user's entry (and any load of it in flight).
    public func invalidate(userId: String) {
        state.withLock { state in
            state.changes &+= 1
            state.young.removeValue(forKey: userId)
            state.old.removeValue(forKey: userId)
            for load in state.loads.keys { state.loads[load]!.insert(userId) }
        }
    }

    /// Drops every entry and every load in flight.
    public func invalidateAll() {
        state.withLock { state in
            state.changes &+= 1
            state.young.removeAll()
            state.old.removeAll()
            state.loads.removeAll()
        }
    }

    /// Whether entries are kept (only while a change listener is connected). Either way the
    /// cache is emptied.
    public func setLive(_ live: Bool) {
        state.withLock { state in
            state.changes &+= 1
            state.live = live
            state.young.removeAll()
            state.old.removeAll()
            state.loads.removeAll()
        }
    }

    /// What subscription data read while this stays the same is still current: `nil` while the
    /// cache is not live (no change notifications arrive: nothing can be known current),
    /// otherwise a number that grows with every change notification. Lets a holder of derived
    /// data (the worker's broadcast audience) keep it until something changed.
    public var changeStamp: UInt64? {
        state.withLock { $0.live ? $0.changes : nil }
    }

    public var statistics: Statistics {
        state.withLock { state in
            Statistics(users: state.young.count + state.old.count, hits: state.hits, misses: state.misses, isLive: state.live)
        }
    }

    private static func insert(_ user: String, _ subscriptions: [Subscription], into state: inout State, capacity: Int) {
        if state.young.count >= capacity / 2, state.young[user] == nil {
            state.old = state.young
            state.young = [:]
            state.young.reserveCapacity(capacity / 2)
        }
        state.old.removeValue(forKey: user)
        state.young[user] = subscriptions
    }
}
