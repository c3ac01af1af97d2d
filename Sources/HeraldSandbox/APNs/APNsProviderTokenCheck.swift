import Foundation
import JWTKit
import Synchronization

/// Checks APNs provider tokens the way Apple does: an ES256 JWT whose header names the key
/// (`kid`) and whose claims name the team (`iss`) and the time it was made (`iat`); the
/// signature must verify with the key's public half; a token older than an hour is expired; a
/// connection that changes tokens more often than every 20 minutes is refused
/// (`TooManyProviderTokenUpdates`) unless its previous token had been refused.
///
/// A token's signature is verified once (``verify(_:)``, async) and the verdict cached, as Apple
/// does for a provider that reuses its token: ``check(authorization:connectionID:now:)`` then
/// answers from the cache, without a task, for every request that carries it.
///
/// Thread rules: `Sendable`.
final class APNsProviderTokenCheck: Sendable {
    struct ConnectionState {
        var seen: Set<String> = []
        var lastNewTokenAt: Date
        var refusedSinceLastNewToken = false
    }

    /// A verified signature: the token's `iat`, or nil when the token is not valid.
    struct Verdict {
        let issuedAt: Int?
    }

    struct State {
        var verdicts: [String: Verdict] = [:]
        var connections: [Int: ConnectionState] = [:]
        var expireIssuedBefore: Date?
    }

    /// What ``check(authorization:connectionID:now:)`` found.
    enum Result: Equatable {
        case accepted
        case rejected(APNsRejection)
        /// A token whose signature has not been checked yet: ``verify(_:)`` it, then check again.
        case unverified(String)
    }

    let keyID: String
    let teamID: String
    let lifetime: TimeInterval
    let updateInterval: TimeInterval
    let allowedSkew: TimeInterval
    private let keys: JWTKeyCollection
    private let publicKey: ES256PublicKey
    private let state = Mutex(State())
    private let keyAdded = Mutex(false)

    init(
        keyID: String, teamID: String, publicKey: ES256PublicKey, lifetime: TimeInterval = 3600, updateInterval: TimeInterval = 20 * 60,
        allowedSkew: TimeInterval = 60
    ) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKey = publicKey
        self.lifetime = lifetime
        self.updateInterval = updateInterval
        self.allowedSkew = allowedSkew
        self.keys = JWTKeyCollection()
    }

    /// Distinct tokens whose signature verified.
    var tokensVerified: Int { state.withLock { $0.verdicts.values.filter { $0.issuedAt != nil }.count } }

    /// Tokens issued before `date` are refused as expired from now on.
    func expireTokens(issuedBefore date: Date) {
        state.withLock { $0.expireIssuedBefore = date }
    }

    /// Checks `authorization` for a request on `connectionID`, from the cached verdicts.
    func check(authorization: String?, connectionID: Int, now: Date) -> Result {
        guard let authorization, let bearer = Self.bearerToken(authorization) else { return .rejected(APNsRejection(403, "MissingProviderToken")) }
        let token = String(bearer)

        return state.withLock { state -> Result in
            func refused(_ rejection: APNsRejection) -> Result {
                state.connections[connectionID]?.refusedSinceLastNewToken = true
                return .rejected(rejection)
            }
            guard let verdict = state.verdicts[token] else { return .unverified(token) }
            guard let iat = verdict.issuedAt else { return refused(APNsRejection(403, "InvalidProviderToken")) }
            let issued = Date(timeIntervalSince1970: TimeInterval(iat))
            if issued.timeIntervalSince(now) > allowedSkew {
                return refused(APNsRejection(403, "InvalidProviderToken"))
            }
            let expiredByScript = state.expireIssuedBefore.map { issued < $0 } ?? false
            if now.timeIntervalSince(issued) > lifetime || expiredByScript {
                return refused(APNsRejection(403, "ExpiredProviderToken"))
            }
            guard var connection = state.connections[connectionID] else {
                state.connections[connectionID] = ConnectionState(seen: [token], lastNewTokenAt: now)
                return .accepted
            }
            if connection.seen.contains(token) { return .accepted }
            guard connection.refusedSinceLastNewToken || now.timeIntervalSince(connection.lastNewTokenAt) >= updateInterval else {
                return .rejected(APNsRejection(429, "TooManyProviderTokenUpdates"))
            }
            connection.seen.insert(token)
            connection.lastNewTokenAt = now
            connection.refusedSinceLastNewToken = false
            state.connections[connectionID] = connection
            return .accepted
        }
    }

    /// The token of `bearer <token>` (the scheme in any case, blanks around the token ignored),
    /// or nil. Byte by byte: this runs for every request.
    static func bearerToken(_ authorization: String) -> Substring? {
        let utf8 = authorization.utf8
        guard let space = utf8.firstIndex(of: UInt8(ascii: " ")), utf8.distance(from: utf8.startIndex, to: space) == 6,
            ServerRequest.sameName(String(authorization[..<space]), "bearer")
        else { return nil }
        func isBlank(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 }
        var start = utf8.index(after: space)
        var end = utf8.endIndex
        while start < end, isBlank(utf8[start]) { start = utf8.index(after: start) }
        while end > start, isBlank(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        return start < end ? authorization[start..<end] : nil
    }

    struct Claims: JWTPayload {
        var iss: String?
        var iat: Int?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Verifies `token`'s header, signature and issuer once and caches the verdict.
    func verify(_ token: String) async {
        let issuedAt = await issuedAt(ofValid: token)
        state.withLock { $0.verdicts[token] = Verdict(issuedAt: issuedAt) }
    }

    private func issuedAt(ofValid token: String) async -> Int? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let headerBytes = Base64URL.decode(String(segments[0])),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            header["alg"] as? String == "ES256", header["kid"] as? String == keyID
        else { return nil }
        if !keyAdded.withLock({ $0 }) {
            await keys.add(ecdsa: publicKey, kid: JWKIdentifier(string: keyID))
            keyAdded.withLock { $0 = true }
        }
        guard let claims = try? await keys.verify(token, as: Claims.self), claims.iss == teamID else { return nil }
        return claims.iat
    }
}
