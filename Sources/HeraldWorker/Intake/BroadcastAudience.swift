import HeraldCore
import HeraldStore
import Synchronization

/// Every deliverable subscription, for broadcasts (`UserId 0`, News without a UserId), read a
/// page at a time and reused for ``ttl`` so that a burst of broadcasts reads the table once.
/// A subscription added during the TTL misses at most that long; dead tokens are caught by the
/// worker's ``DeadTokenRegistry`` and the journal. Thread-safe.
final class BroadcastAudience: Sendable {
    private let devices: DeviceRepository
    private let ttl: Duration
    private let cached = Mutex<(loaded: ContinuousClock.Instant, subscriptions: [Subscription])?>(nil)

    init(devices: DeviceRepository, ttl: Duration) {
        self.devices = devices
        self.ttl = ttl
    }

    func subscriptions() async throws(StoreError) -> [Subscription] {
        let now = ContinuousClock.now
        if ttl > .zero, let hit = cached.withLock({ $0 }), now - hit.loaded < ttl {
            return hit.subscriptions
        }
        var all: [Subscription] = []
        var cursor: SubscriptionPage.Cursor?
        repeat {
            let page = try await devices.allSubscriptions(after: cursor, limit: 5_000)
            all.append(contentsOf: page.subscriptions)
            cursor = page.next
        } while cursor != nil
        cached.withLock { $0 = (now, all) }
        return all
    }
}
