import Foundation
import JWTKit
import Synchronization

/// Makes and caches the ES256 provider token (JWT) that authenticates APNs requests.
///
/// Apple rejects a token older than an hour (`ExpiredProviderToken`) and one refreshed more
/// often than every 20 minutes (`TooManyProviderTokenUpdates`), so the token is reused until it
/// is ``refreshInterval`` old (20–55 minutes, default 50). ``invalidate(_:)`` — called when Apple
/// answered `ExpiredProviderToken` or `InvalidProviderToken` — forces one new token even if the
/// current one is younger: only the first call for a given token counts, and concurrent callers
/// of ``token()`` wait for the one token being made, so 500 concurrent rejections cause exactly
/// one new token. Forced refreshes happen at most once per ``minimumForcedRefreshInterval``, so
/// that a key Apple keeps refusing cannot make Herald sign a token per request.
///
/// ``cachedToken()`` reads the current token without an actor hop (a lock), for the senders'
/// batch path; only when it has none does a sender await ``token()``.
///
/// Thread rules: an actor; call it from anywhere. The clock is injectable for tests.
public actor APNsTokenProvider {
    /// A token and when it was made.
    struct Issued {
        let token: String
        let issuedAt: Date
        var invalidated: Bool
    }

    public nonisolated let key: APNsSigningKey
    public nonisolated let refreshInterval: Duration
    public nonisolated let minimumForcedRefreshInterval: Duration
    private nonisolated let clock: any ProviderClock
    private let keys = JWTKeyCollection()
    private var keysReady = false
    /// The current token; behind a lock so that ``cachedToken()`` needs no hop.
    private nonisolated let current = Mutex<Issued?>(nil)
    private var pending: Task<Issued, any Error>?
    private var generated = 0
    private var lastForcedRefresh: Date?

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
    }

    /// Tokens signed so far.
    public var tokensGenerated: Int { generated }

    /// The token to send now: the cached one, or a new one when it is too old or was invalidated.
    ///
    /// - Throws: the signing library's error (never expected once the key has loaded).
    public func token() async throws -> String {
        if let token = cachedToken() {
            return token
        }
        if let pending {
            return try await pending.value.token
        }
        let task = Task { try await self.sign() }
        pending = task
        defer { pending = nil }
        let issued = try await task.value
        current.withLock { $0 = issued }
        generated += 1
        return issued.token
    }

    /// The current token if it may be sent now (neither too old nor invalidated), else nil:
    /// then ``token()`` makes one.
    public nonisolated func cachedToken() -> String? {
        guard let issued = current.withLock({ $0 }), !issued.invalidated, age(of: issued) < refreshInterval else { return nil }
        return issued.token
    }

    /// Apple refused `token` as expired or invalid: the next ``token()`` makes a new one, unless
    /// `token` is no longer the current token (another caller already handled it) or the last
    /// forced refresh was less than ``minimumForcedRefreshInterval`` ago. Returns whether this
    /// call invalidated the token.
    @discardableResult
    public func invalidate(_ token: String) -> Bool {
        guard let issued = current.withLock({ $0 }), issued.token == token, !issued.invalidated else { return false }
        let now = clock.now()
        if let lastForcedRefresh, Self.duration(from: lastForcedRefresh, to: now) < minimumForcedRefreshInterval {
            return false
        }
        lastForcedRefresh = now
        current.withLock { $0?.invalidated = true }
        return true
    }

    private nonisolated func age(of issued: Issued) -> Duration {
        Self.duration(from: issued.issuedAt, to: clock.now())
    }

    static func duration(from start: Date, to end: Date) -> Duration {
        .milliseconds(Int64((end.timeIntervalSince(start) * 1000).rounded()))
    }

    private func sign() async throws -> Issued {
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
        return Issued(token: token, issuedAt: Date(timeIntervalSince1970: TimeInterval(seconds)), invalidated: false)
    }
}
