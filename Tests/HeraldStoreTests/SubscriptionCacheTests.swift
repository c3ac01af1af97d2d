import HeraldCore
import HeraldTesting
import Synchronization
import Testing

@testable import HeraldStore

/// The cache's own rules, with a fake loader (no database).
@Suite("SubscriptionCache")
struct SubscriptionCacheTests {
    /// Answers one subscription per user, counts calls, and can hold a load until released.
    final class FakeLoader: Sendable {
        struct State {
            var calls: [[String]] = []
            var culture = "ru-RU"
            var gate: CheckedContinuation<Void, Never>?
            var holdNext = false
        }
        let state = Mutex(State())

        func load(_ users: [String]) async -> [Subscription] {
            // Reads the data first, then (if asked) waits: like a query whose snapshot predates
            // a change that is committed while its rows travel back.
            let (hold, culture) = state.withLock { state in
                state.calls.append(users)
                defer { state.holdNext = false }
                return (state.holdNext, state.culture)
            }
            if hold {
                await withCheckedContinuation { continuation in state.withLock { $0.gate = continuation } }
            }
            return users.filter { !$0.hasPrefix("none") }.map {
                Subscription(deviceId: "d-\($0)", token: "t", platform: .ios, userId: $0, culture: culture)
            }
        }

        var calls: [[String]] { state.withLock { $0.calls } }
        var isHeld: Bool { state.withLock { $0.gate != nil } }
        func release() {
            state.withLock {
                $0.gate?.resume(); $0.gate = nil
            }
        }
    }

    static func cache(capacity: Int = 100, live: Bool = true) -> (SubscriptionCache, FakeLoader) {
        let loader = FakeLoader()
        let cache = SubscriptionCache(capacity: capacity) { (users) async throws(StoreError) in await loader.load(users) }
        cache.setLive(live)
        return (cache, loader)
    }

    @Test func loadsAllMissesInOneCallAndThenHits() async throws {
        let (cache, loader) = Self.cache()
        let first = try await cache.subscriptions(forUsers: ["a", "b", "none-c", "a"])
        #expect(Set(first.keys) == ["a", "b", "none-c"])
        #expect(first["none-c"] == [])
        #expect(first["a"]?.map(\.deviceId) == ["d-a"])
        #expect(loader.calls == [["a", "b", "none-c"]])

        let second = try await cache.subscriptions(forUsers: ["b", "none-c", "d"])
        #expect(second["b"]?.count == 1 && second["none-c"] == [] && second["d"]?.count == 1)
        #expect(loader.calls.last == ["d"])
        #expect(cache.statistics.hits == 2)
        #expect(cache.statistics.misses == 4)
    }

    @Test func keepsNothingWhenNotLive() async throws {
        let (cache, loader) = Self.cache(live: false)
        _ = try await cache.subscriptions(forUsers: ["a"])
        _ = try await cache.subscriptions(forUsers: ["a"])
        #expect(loader.calls.count == 2)
        #expect(cache.statistics.users == 0)
    }

    @Test func aLoadRacingAnInvalidationDoesNotStoreStaleData() async throws {
        let (cache, loader) = Self.cache()
        _ = try await cache.subscriptions(forUsers: ["other"])
        loader.state.withLock { $0.holdNext = true }
        let slow = Task { try await cache.subscriptions(forUsers: ["a", "b"]) }
        try await waitUntil("the load to start", timeout: .seconds(5)) { loader.isHeld }
        // The data changes and "a" is invalidated while the load is in flight.
        loader.state.withLock { $0.culture = "en-US" }
        cache.invalidate(userId: "a")
        loader.release()
        let stale = try await slow.value
        #expect(stale["a"]?.first?.culture == "ru-RU")

        let next = try await cache.subscriptions(forUsers: ["a", "b"])
        #expect(next["a"]?.first?.culture == "en-US", "a was reloaded")
        #expect(next["b"]?.first?.culture == "ru-RU", "b was cached by the slow load")
        #expect(loader.calls.last == ["a"])
    }

    @Test func aLoadRacingAFullInvalidationStoresNothing() async throws {
        let (cache, loader) = Self.cache()
        loader.state.withLock { $0.holdNext = true }
        let slow = Task { try await cache.subscriptions(forUsers: ["a"]) }
        try await waitUntil("the load to start", timeout: .seconds(5)) { loader.isHeld }
        cache.invalidateAll()
        loader.release()
        _ = try await slow.value
        #expect(cache.statistics.users == 0)
    }

    @Test func staysWithinCapacityAndKeepsRecentlyUsedUsers() async throws {
        let (cache, loader) = Self.cache(capacity: 10)
        for n in 0..<50 {
            _ = try await cache.subscriptions(forUsers: ["u\(n)"])
            _ = try await cache.subscriptions(forUsers: ["hot"])  // used all the time
            #expect(cache.statistics.users <= 10)
        }
        let before = loader.calls.count
        _ = try await cache.subscriptions(forUsers: ["hot", "u49"])
        #expect(loader.calls.count == before, "recently used users are still cached")
        _ = try await cache.subscriptions(forUsers: ["u0"])
        #expect(loader.calls.count == before + 1, "old users were evicted")
    }

    @Test func loaderErrorsPropagate() async throws {
        let cache = SubscriptionCache(capacity: 10) { (_) async throws(StoreError) -> [Subscription] in
            throw StoreError(code: .unavailable, message: "down")
        }
        cache.setLive(true)
        do {
            _ = try await cache.subscriptions(forUsers: ["a"])
            Issue.record("the loader's error must propagate")
        } catch {
            #expect(error.isTransient)
        }
        #expect(try await cache.subscriptions(forUsers: []).isEmpty)
    }
}
