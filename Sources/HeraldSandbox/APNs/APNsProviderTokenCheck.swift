import Foundation
import JWTKit
import Synchronization

/// Checks APNs provider tokens the way Apple does: an ES256 JWT whose header names the key
/// (`kid`) and whose claims name the team (`iss`) and the time it was made (`iat`); the
/// signature must verify with the key's public half; a token older than an hour is expired; a
/// connection that changes tokens more often than every 20 minutes is refused
/// (`TooManyProviderTokenUpdates`) unless its previous token had been refused.
///
/// Signatures are verified once per token and cached. Thread rules: `Sendable`.
final class APNsProviderTokenCheck: Sendable {
    struct ConnectionState {
        var seen: Set<String> = []
        var lastNewTokenAt: Date
        var refusedSinceLastNewToken = false
    }

    struct State {
        var verified: [String: Int] = [:]
        var connections: [Int: ConnectionState] = [:]
        var expireIssuedBefore: Date?
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

    init(keyID: String, teamID: String, publicKey: ES256PublicKey, lifetime: TimeInterval = 3600, updateInterval: TimeInterval = 20 * 60, allowedSkew: TimeInterval = 60) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKey = publicKey
        self.lifetime = lifetime
        self.updateInterval = updateInterval
        self.allowedSkew = allowedSkew
        self.keys = JWTKeyCollection()
    }

    /// Distinct tokens whose signature verified.
    var tokensVerified: Int { state.withLock { $0.verified.count } }

    /// Tokens issued before `date` are refused as expired from now on.
    func expireTokens(issuedBefore date: Date) {
        state.withLock { $0.expireIssuedBefore = date }
    }

    /// Checks `authorization` for a request on `connectionID`; nil when the token is good.
    func check(authorization: String?, connectionID: Int, now: Date) async -> APNsRejection? {
        guard let authorization, !authorization.isEmpty else { return APNsRejection(403, "MissingProviderToken") }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return APNsRejection(403, "MissingProviderToken") }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)

        let iat: Int
        if let cached = state.withLock({ $0.verified[token] }) {
            iat = cached
        } else {
            switch await verify(token) {
            case .success(let issuedAt): iat = issuedAt
            case .failure(let rejection):
                refused(token, connectionID: connectionID)
                return rejection
            }
        }
        let issued = Date(timeIntervalSince1970: TimeInterval(iat))
        if issued.timeIntervalSince(now) > allowedSkew {
            refused(token, connectionID: connectionID)
            return APNsRejection(403, "InvalidProviderToken")
        }
        let expiredByScript = state.withLock { state in state.expireIssuedBefore.map { issued < $0 } ?? false }
        if now.timeIntervalSince(issued) > lifetime || expiredByScript {
            refused(token, connectionID: connectionID)
            return APNsRejection(403, "ExpiredProviderToken")
        }
        return state.withLock { state -> APNsRejection? in
            guard var connection = state.connections[connectionID] else {
                state.connections[connectionID] = ConnectionState(seen: [token], lastNewTokenAt: now)
                return nil
            }
            defer { state.connections[connectionID] = connection }
            if connection.seen.contains(token) { return nil }
            guard connection.refusedSinceLastNewToken || now.timeIntervalSince(connection.lastNewTokenAt) >= updateInterval else {
                return APNsRejection(429, "TooManyProviderTokenUpdates")
            }
            connection.seen.insert(token)
            connection.lastNewTokenAt = now
            connection.refusedSinceLastNewToken = false
            return nil
        }
    }

    private func refused(_ token: String, connectionID: Int) {
        state.withLock { state in
            state.connections[connectionID]?.refusedSinceLastNewToken = true
        }
    }

    struct Claims: JWTPayload {
        var iss: String?
        var iat: Int?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private func verify(_ token: String) async -> Result<Int, APNsRejection> {
        let invalid = APNsRejection(403, "InvalidProviderToken")
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let headerBytes = Base64URL.decode(String(segments[0])),
              let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any]
        else { return .failure(invalid) }
        guard header["alg"] as? String == "ES256" else { return .failure(invalid) }
        guard let kid = header["kid"] as? String else { return .failure(invalid) }
        guard kid == keyID else { return .failure(APNsRejection(403, "InvalidProviderToken")) }
        if !keyAdded.withLock({ $0 }) {
            await keys.add(ecdsa: publicKey, kid: JWKIdentifier(string: keyID))
            keyAdded.withLock { $0 = true }
        }
        let claims: Claims
        do {
            claims = try await keys.verify(token, as: Claims.self)
        } catch {
            return .failure(invalid)
        }
        guard claims.iss == teamID, let iat = claims.iat else { return .failure(invalid) }
        state.withLock { $0.verified[token] = iat }
        return .success(iat)
    }
}
