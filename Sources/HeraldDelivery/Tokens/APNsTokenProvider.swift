import Foundation
import HeraldCore
import JWTKit

/// Makes the ES256 provider token (JWT) that authenticates APNs requests, cached in a
/// ``CachedCredential``.
///
/// Apple rejects a token older than an hour (`ExpiredProviderToken`) and one refreshed more
/// often than every 20 minutes (`TooManyProviderTokenUpdates`), so the token is reused until it
/// is ``refreshInterval`` old (20–55 minutes, default 50). Invalidating it (``ProviderCredential``)
/// — when Apple answered `ExpiredProviderToken` or `InvalidProviderToken` — forces one new token
/// even if the current one is younger: only the first call for a given token counts, and
/// concurrent callers wait for the one token being made, so 500 concurrent rejections cause
/// exactly one new token. Forced refreshes happen at most once per
/// ``minimumForcedRefreshInterval``, so that a key Apple keeps refusing cannot make Herald sign a
/// token per request.
///
/// Thread rules: an actor (its signing keys); the cache has its own lock, so only signing hops
/// onto it. Call it from anywhere. The clock is injectable for tests.
public actor APNsTokenProvider: ProviderCredential {
    public nonisolated let key: APNsSigningKey
    public nonisolated let refreshInterval: Duration
    public nonisolated let minimumForcedRefreshInterval: Duration
    private nonisolated let clock: any ProviderClock
    private let keys = JWTKeyCollection()
    private var keysReady = false
    nonisolated let cache: CachedCredential<String>

    /// - Parameters:
    ///   - refreshInterval: reuse a token this long; clamped to 20...55 minutes.
    ///   - minimumForcedRefreshInterval: at most one forced refresh (``invalidate(_:)``) per
    ///     this long.
    public init(
        key: APNsSigningKey, clock: any ProviderClock = SystemProviderClock(), refreshInterval: Duration = .seconds(50 * 60),
        minimumForcedRefreshInterval: Duration = .seconds(60)
    ) {
        self.key = key
        self.clock = clock
        self.refreshInterval = min(max(refreshInterval, .seconds(20 * 60)), .seconds(55 * 60))
        self.minimumForcedRefreshInterval = minimumForcedRefreshInterval
        self.cache = CachedCredential(clock: clock, minimumForcedRefreshInterval: minimumForcedRefreshInterval)
    }

    /// A new token, usable for ``refreshInterval`` from the second it carries.
    ///
    /// - Throws: the signing library's error (never expected once the key has loaded).
    func refresh() async throws -> CachedCredential<String>.Fresh {
        if !keysReady {
            await keys.add(ecdsa: key.privateKey, kid: JWKIdentifier(string: key.keyID))
            keysReady = true
        }
        let now = clock.now()
        let seconds = Int(now.timeIntervalSince1970.rounded(.down))
        var header = JWTHeader()
        header.alg = "ES256"
        header.kid = key.keyID
        let token = try await keys.sign(APNsProviderClaims(iss: key.teamID, iat: seconds), kid: JWKIdentifier(string: key.keyID), header: header)
        return .init(value: token, expiresAt: Date(timeIntervalSince1970: TimeInterval(seconds)).addingTimeInterval(refreshInterval.seconds))
    }
}
