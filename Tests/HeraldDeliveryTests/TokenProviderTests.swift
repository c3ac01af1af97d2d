import Crypto
import Foundation
import Synchronization
import Testing

@testable import HeraldDelivery

@Suite struct TokenProviderTests {
    static let key = try! APNsSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "ABCDE12345", teamID: "TEAM123456")

    static func decodeSegment(_ token: String, _ index: Int) throws -> [String: Any] {
        var text = String(token.split(separator: ".")[index]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        let data = try #require(Data(base64Encoded: text))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theTokenCarriesWhatAppleDocuments() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000.75))
        let provider = APNsTokenProvider(key: Self.key, clock: clock)
        let token = try await provider.value()
        let header = try Self.decodeSegment(token, 0)
        let claims = try Self.decodeSegment(token, 1)
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "ABCDE12345")
        #expect(claims["iss"] as? String == "TEAM123456")
        #expect(claims["iat"] as? Int == 1_700_000_000)
        #expect(claims.count == 2)
    }

    @Test func reusedUntilTheRefreshIntervalThenRenewed() async throws {
        let clock = ManualClock()
        let provider = APNsTokenProvider(key: Self.key, clock: clock, refreshInterval: .seconds(50 * 60))
        let first = try await provider.value()
        clock.advance(by: 49 * 60)
        #expect(try await provider.value() == first)
        clock.advance(by: 60)
        let second = try await provider.value()
        #expect(second != first)
        #expect(provider.refreshes == 2)
        // The interval is clamped to Apple's window: never under 20 minutes.
        #expect(APNsTokenProvider(key: Self.key, refreshInterval: .seconds(60)).refreshInterval == .seconds(20 * 60))
        #expect(APNsTokenProvider(key: Self.key, refreshInterval: .seconds(7200)).refreshInterval == .seconds(55 * 60))
    }

    @Test func invalidationUnderConcurrencyMakesOneNewTokenAndIsRateLimited() async throws {
        let clock = ManualClock()
        let provider = APNsTokenProvider(key: Self.key, clock: clock, minimumForcedRefreshInterval: .seconds(60))
        let first = try await provider.value()
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<500 {
                group.addTask {
                    provider.invalidate(first)
                    return try await provider.value()
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(!tokens.contains(first))
        #expect(provider.refreshes == 2)
        // A second forced refresh within a minute is refused; after it, allowed.
        let second = try #require(tokens.first)
        #expect(provider.invalidate(second) == false)
        #expect(try await provider.value() == second)
        clock.advance(by: 61)
        #expect(provider.invalidate(second) == true)
        #expect(try await provider.value() != second)
        // A stale token (not the current one) invalidates nothing.
        #expect(provider.invalidate(first) == false)
    }

    /// The cached token is read without a hop and agrees with the actor: none before the first
    /// `token()`, the same token after, none once it is invalidated or too old.
    @Test func theCachedTokenFollowsTheProvider() async throws {
        let clock = ManualClock()
        let provider = APNsTokenProvider(key: Self.key, clock: clock)
        #expect(provider.cachedValue() == nil)
        let token = try await provider.value()
        #expect(provider.cachedValue() == token)
        clock.advance(by: 51 * 60)
        #expect(provider.cachedValue() == nil, "older than the refresh interval")
        let fresh = try await provider.value()
        #expect(provider.cachedValue() == fresh)
        #expect(provider.invalidate(fresh))
        #expect(provider.cachedValue() == nil)
    }
}

@Suite struct InFlightGateTests {
    @Test func startsWithOnePermitAndOpensToTheLimit() async throws {
        let gate = InFlightGate(limit: 5)
        #expect(await gate.acquire())
        let waiter = Task { await gate.acquire() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(gate.waiting == 1)
        gate.open()
        #expect(await waiter.value)
        #expect(gate.inUse == 2)
        for _ in 0..<3 { #expect(await gate.acquire()) }
        #expect(gate.inUse == 5)
        let blocked = Task { await gate.acquire() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(gate.waiting == 1)
        gate.release()
        #expect(await blocked.value)
        #expect(gate.inUse == 5)
    }

    @Test func aCancelledWaiterGetsNoPermit() async throws {
        let gate = InFlightGate(limit: 1)
        #expect(await gate.acquire())
        let waiter = Task { await gate.acquire() }
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        #expect(await waiter.value == false)
        #expect(gate.waiting == 0)
        gate.release()
        #expect(gate.inUse == 0)
    }

    /// Work handed to `acquire(_:)` runs in order, never more than the limit at once; work that
    /// gives its permit back at once does not nest (100,000 of them would overflow the stack).
    @Test func closuresRunInOrderWithinTheLimit() {
        let gate = InFlightGate(limit: 3, warmUpPermits: 3)
        let started = Mutex<[Int]>([])
        for n in 0..<5 { gate.acquire { started.withLock { $0.append(n) } } }
        #expect(started.withLock { $0 } == [0, 1, 2])
        #expect(gate.inUse == 3 && gate.waiting == 2)
        gate.release()
        #expect(started.withLock { $0 } == [0, 1, 2, 3])
        gate.release()
        gate.release()
        #expect(started.withLock { $0 } == [0, 1, 2, 3, 4])
        #expect(gate.inUse == 2)
        gate.release()
        gate.release()
        #expect(gate.inUse == 0)

        let ran = Mutex(0)
        let blocked = InFlightGate(limit: 1)
        blocked.acquire {}  // holds the only permit
        for _ in 0..<100_000 {
            blocked.acquire {
                ran.withLock { $0 += 1 }
                blocked.release()
            }
        }
        #expect(ran.withLock { $0 } == 0)
        blocked.release()
        #expect(ran.withLock { $0 } == 100_000)
        #expect(blocked.inUse == 0 && blocked.waiting == 0)
    }

    @Test func concurrencyNeverExceedsTheLimit() async {
        let gate = InFlightGate(limit: 4, warmUpPermits: 4)
        let counter = ConcurrencyCounter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    guard await gate.acquire() else { return }
                    counter.enter()
                    try? await Task.sleep(for: .milliseconds(1))
                    counter.leave()
                    gate.release()
                }
            }
        }
        #expect(counter.maximum <= 4)
        #expect(counter.maximum >= 2)
        #expect(gate.inUse == 0)
    }
}

final class ConcurrencyCounter: Sendable {
    private let state = Mutex((current: 0, maximum: 0))
    func enter() {
        state.withLock {
            $0.current += 1; $0.maximum = max($0.maximum, $0.current)
        }
    }
    func leave() { state.withLock { $0.current -= 1 } }
    var maximum: Int { state.withLock { $0.maximum } }
}
