import Foundation
import HeraldCore
import Synchronization

/// The credential a provider's requests carry (an APNs provider token, an FCM access token),
/// cached, renewed by one refresh however many callers need it at once, and dropped when the
/// provider refuses it. ``APNsTokenProvider`` and ``FCMAccessTokenProvider`` each hold one and
/// say only how a new credential is made.
///
/// - Reuse: a credential is sent while `now + refreshMargin` is before its ``Fresh/expiresAt``.
/// - Single flight: when none is usable, the first caller of ``value(refresh:)`` starts the
///   refresh in a task and every caller until it ends awaits that one task: 1,000 sends at
///   start-up make one credential.
/// - Invalidation: ``invalidate(_:)`` (the provider refused the credential) makes the next
///   ``value(refresh:)`` refresh, once however many requests saw the refusal: only the call
///   for the current, not yet invalidated value counts. With a
///   ``minimumForcedRefreshInterval`` forced refreshes are at most that frequent, so that a key
///   the provider keeps refusing cannot make Herald refresh per request.
///
/// ``cachedValue()`` is the senders' hot path: one lock, no hop, no task. A task is made only
/// to refresh.
///
/// Thread rules: `Sendable`; all state is behind one lock, so it may be called from any thread
/// or task. The clock is injectable for tests.
final class CachedCredential<Value: Sendable & Equatable>: Sendable {
    /// A new credential and when it stops being usable.
    struct Fresh: Sendable {
        let value: Value
        let expiresAt: Date
    }

    private struct State {
        var current: Fresh?
        var invalidated = false
        var pending: Task<Fresh, any Error>?
        var refreshes = 0
        var lastForcedRefresh: Date?
    }

    let clock: any ProviderClock
    /// Refresh this long before the credential expires.
    let refreshMargin: Duration
    /// At most one forced refresh (``invalidate(_:)``) per this long; `nil`: no limit.
    let minimumForcedRefreshInterval: Duration?
    private let state = Mutex(State())

    init(clock: any ProviderClock, refreshMargin: Duration = .zero, minimumForcedRefreshInterval: Duration? = nil) {
        self.clock = clock
        self.refreshMargin = refreshMargin
        self.minimumForcedRefreshInterval = minimumForcedRefreshInterval
    }

    /// Refreshes that succeeded so far.
    var refreshes: Int { state.withLock { $0.refreshes } }

    /// The current credential if it may be sent now (neither about to expire nor invalidated),
    /// else nil: then ``value(refresh:)`` makes one.
    func cachedValue() -> Value? {
        let now = clock.now()
        return state.withLock { state in usable(state, now: now) }
    }

    /// The credential to send now: the cached one, or the result of the one refresh running,
    /// started by this call when none is.
    ///
    /// - Throws: what `refresh` threw (every caller waiting for that refresh sees it).
    func value(refresh: @escaping @Sendable () async throws -> Fresh) async throws -> Value {
        let now = clock.now()
        let task: Task<Fresh, any Error>
        switch state.withLock({ state -> Lookup in
            if let value = usable(state, now: now) { return .cached(value) }
            if let pending = state.pending { return .waiting(pending) }
            let started = Task { try await refresh() }
            state.pending = started
            return .waiting(started)
        }) {
        case .cached(let value): return value
        case .waiting(let pending): task = pending
        }
        let fresh: Fresh
        do {
            fresh = try await task.value
        } catch {
            state.withLock { state in
                if state.pending == task { state.pending = nil }
            }
            throw error
        }
        // The first waiter to wake installs the result; the others find it done.
        state.withLock { state in
            guard state.pending == task else { return }
            state.pending = nil
            state.current = fresh
            state.invalidated = false
            state.refreshes += 1
        }
        return fresh.value
    }

    /// The provider refused `value`: the next ``value(refresh:)`` refreshes, unless `value` is
    /// no longer the current credential or was already invalidated (another caller handled the
    /// refusal), or the last forced refresh was less than ``minimumForcedRefreshInterval`` ago.
    /// Returns whether this call invalidated the credential.
    @discardableResult
    func invalidate(_ value: Value) -> Bool {
        let now = clock.now()
        return state.withLock { state in
            guard let current = state.current, current.value == value, !state.invalidated else { return false }
            if let minimumForcedRefreshInterval, let last = state.lastForcedRefresh,
                Self.duration(from: last, to: now) < minimumForcedRefreshInterval
            {
                return false
            }
            state.lastForcedRefresh = now
            state.invalidated = true
            return true
        }
    }

    private func usable(_ state: borrowing State, now: Date) -> Value? {
        guard let current = state.current, !state.invalidated, now.addingTimeInterval(refreshMargin.seconds) < current.expiresAt else { return nil }
        return current.value
    }

    /// Whole milliseconds from `start` to `end`.
    static func duration(from start: Date, to end: Date) -> Duration {
        .milliseconds(Int64((end.timeIntervalSince(start) * 1000).rounded()))
    }

    /// What ``value(refresh:)`` found under the lock.
    private enum Lookup: Sendable {
        case cached(Value)
        case waiting(Task<Fresh, any Error>)
    }
}
