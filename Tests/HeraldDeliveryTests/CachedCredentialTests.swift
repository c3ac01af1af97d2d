import Foundation
import Synchronization
import Testing

@testable import HeraldDelivery

/// The credential cache both token providers use, on its own: no keys, no services.
@Suite struct CachedCredentialTests {
    /// A refresh that hands out 1, 2, 3… valid for an hour, counts its calls, and can be held
    /// until the test lets it finish.
    final class Refresher: Sendable {
        private let state = Mutex((calls: 0, held: false, arrivals: 0))
        let clock: ManualClock
        let failing: Bool

        init(clock: ManualClock, held: Bool = false, failing: Bool = false) {
            self.clock = clock
            self.failing = failing
            state.withLock { $0.held = held }
        }

        var calls: Int { state.withLock { $0.calls } }
        /// Callers that said they are about to ask for the credential.
        var arrivals: Int { state.withLock { $0.arrivals } }
        func arrive() { state.withLock { $0.arrivals += 1 } }
        func release() { state.withLock { $0.held = false } }

        func refresh() async throws -> CachedCredential<Int>.Fresh {
            let call = state.withLock { state in
                state.calls += 1
                return state.calls
            }
            while state.withLock({ $0.held }) { try await Task.sleep(for: .milliseconds(1)) }
            if failing { throw RefreshFailed() }
            return .init(value: call, expiresAt: clock.now().addingTimeInterval(3600))
        }
    }

    struct RefreshFailed: Error {}

    @Test func concurrentCallersShareOneRefresh() async throws {
        let clock = ManualClock()
        let credential = CachedCredential<Int>(clock: clock)
        let refresher = Refresher(clock: clock, held: true)
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    refresher.arrive()
                    return try await credential.value(refresh: refresher.refresh)
                }
            }
            // Every caller has asked while the one refresh is still running.
            while refresher.arrivals < 200 { try await Task.sleep(for: .milliseconds(1)) }
            try await Task.sleep(for: .milliseconds(50))
            refresher.release()
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(values.count == 200)
        #expect(Set(values) == [1])
        #expect(refresher.calls == 1)
        #expect(credential.refreshes == 1)
        #expect(credential.cachedValue() == 1)
    }

    @Test func reusedUntilTheMarginBeforeExpiry() async throws {
        let clock = ManualClock()
        let credential = CachedCredential<Int>(clock: clock, refreshMargin: .seconds(300))
        let refresher = Refresher(clock: clock)
        #expect(credential.cachedValue() == nil)
        #expect(try await credential.value(refresh: refresher.refresh) == 1)
        clock.advance(by: 3299)
        #expect(credential.cachedValue() == 1, "more than the margin before expiry")
        #expect(try await credential.value(refresh: refresher.refresh) == 1)
        clock.advance(by: 2)
        #expect(credential.cachedValue() == nil, "within the margin")
        #expect(try await credential.value(refresh: refresher.refresh) == 2)
        #expect(credential.refreshes == 2)
    }

    @Test func invalidationCountsOnceForTheCurrentValue() async throws {
        let clock = ManualClock()
        let credential = CachedCredential<Int>(clock: clock)
        let refresher = Refresher(clock: clock)
        #expect(credential.invalidate(1) == false, "nothing cached yet")
        #expect(try await credential.value(refresh: refresher.refresh) == 1)
        let invalidated = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<100 { group.addTask { credential.invalidate(1) } }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(invalidated == 1)
        #expect(credential.cachedValue() == nil)
        #expect(try await credential.value(refresh: refresher.refresh) == 2)
        #expect(credential.invalidate(1) == false, "a stale value invalidates nothing")
        #expect(credential.cachedValue() == 2)
        // No limit configured: the new value may be invalidated at once.
        #expect(credential.invalidate(2))
        #expect(try await credential.value(refresh: refresher.refresh) == 3)
    }

    @Test func forcedRefreshesAreRateLimited() async throws {
        let clock = ManualClock()
        let credential = CachedCredential<Int>(clock: clock, minimumForcedRefreshInterval: .seconds(60))
        let refresher = Refresher(clock: clock)
        _ = try await credential.value(refresh: refresher.refresh)
        #expect(credential.invalidate(1))
        #expect(try await credential.value(refresh: refresher.refresh) == 2)
        #expect(credential.invalidate(2) == false, "within a minute of the last forced refresh")
        #expect(credential.cachedValue() == 2)
        clock.advance(by: 61)
        #expect(credential.invalidate(2))
        #expect(try await credential.value(refresh: refresher.refresh) == 3)
    }

    /// A failed refresh reaches every caller that waited for it, caches nothing, and the next
    /// caller tries again.
    @Test func aFailedRefreshIsNotKept() async throws {
        let clock = ManualClock()
        let credential = CachedCredential<Int>(clock: clock)
        let failing = Refresher(clock: clock, held: true, failing: true)
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    failing.arrive()
                    return (try? await credential.value(refresh: failing.refresh)) == nil
                }
            }
            while failing.arrivals < 20 { try? await Task.sleep(for: .milliseconds(1)) }
            try? await Task.sleep(for: .milliseconds(50))
            failing.release()
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(failures == 20)
        #expect(failing.calls == 1)
        #expect(credential.refreshes == 0)
        #expect(credential.cachedValue() == nil)
        let working = Refresher(clock: clock)
        #expect(try await credential.value(refresh: working.refresh) == 1)
        #expect(credential.refreshes == 1)
    }
}
