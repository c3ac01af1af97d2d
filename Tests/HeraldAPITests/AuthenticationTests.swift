import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Hummingbird
import JWTKit
import Logging
import Synchronization
import Testing

@testable import HeraldAPI

/// Bearer tokens: JWTs (HS256/RS256/ES256, algorithm pinned, times with leeway) and opaque
/// tokens through introspection; rate limits.
@Suite("Authentication")
struct AuthenticationTests {
    static let subscribe = #"{"os": "ios", "culture": "ru-ru", "id": "dev", "uri": "none", "tags": []}"#

    /// Missing, malformed, expired, wrong-signature and `alg: none` tokens → 401 with the error format.
    @Test func badTokensAreRefused() async throws {
        try await APIFixture.with { api in
            let cases: [(String?, String)] = [
                (nil, "unauthorized"),
                ("", "unauthorized"),
                ("not-a-jwt", "invalid_token"),
                (try await TestTokens.token("u1", expiresIn: -120), "token_expired"),
                (try await TestTokens.token("u1", notBefore: Date().addingTimeInterval(600)), "token_expired"),
                (try await TestTokens.token("u1", secret: Array("another-secret-of-at-least-32-bytes!!".utf8)), "invalid_token"),
                (try TestTokens.unsignedToken("u1"), "invalid_token"),
                (try await TestTokens.token(String(repeating: "x", count: 200)), "invalid_token"),
            ]
            for (token, code) in cases {
                var headers: HTTPFields = [:]
                if let token { headers[.authorization] = "Bearer \(token)" }
                for (method, path) in [(HTTPRequest.Method.post, "/Subscribe.ashx"), (.get, "/v1/me/settings")] {
                    let reply = try await api.client.send(method, path, json: Self.subscribe, headers: headers)
                    #expect(reply.status == 401, "\(code) \(path)")
                    #expect(reply.errorCode == code, "\(path)")
                    #expect(reply.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                }
            }
            let basic = try await api.client.send(.get, "/v1/me/settings", headers: [.authorization: "Basic dTE6cA=="])
            #expect(basic.errorCode == "unauthorized")
            // Within the leeway an expired token still works; the scheme is case-insensitive.
            let late = try await TestTokens.token("u1", expiresIn: -10)
            #expect(try await api.client.send(.get, "/v1/me/settings", headers: [.authorization: "bearer \(late)"]).status == 200)
            #expect(try await api.store.devices.list().isEmpty)
        }
    }

    /// The key pins the algorithm: an HS256 token signed with the RSA public key's bytes (the
    /// classic confusion attack) is refused by an RS256 verifier, and ES256 works with its key.
    @Test func algorithmIsPinnedToTheKeyType() async throws {
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let rsaPublicPEM = rsa.publicKey.pemRepresentation
        let verifier = try await JWTVerifier(configuration: JWTConfiguration(key: .rs256(publicKeyPEM: rsaPublicPEM)))
        let claims = TestTokens.claims("u1", zone: "w1")

        let signer = JWTKeyCollection()
        await signer.add(rsa: try Insecure.RSA.PrivateKey(pem: rsa.pemRepresentation), digestAlgorithm: .sha256)
        #expect(try await verifier.authenticate(bearer: try await signer.sign(claims)) == Identity(userId: "u1", zoneId: "w1"))

        let confused = JWTKeyCollection()
        await confused.add(hmac: HMACKey(from: Array(rsaPublicPEM.utf8)), digestAlgorithm: .sha256)
        await #expect(throws: APIError.self) { try await verifier.authenticate(bearer: try await confused.sign(claims)) }
        await #expect(throws: APIError.self) { try await verifier.authenticate(bearer: try TestTokens.unsignedToken("u1")) }

        let ec = ES256PrivateKey()
        let ecVerifier = try await JWTVerifier(configuration: JWTConfiguration(key: .es256(publicKeyPEM: ec.publicKey.pemRepresentation)))
        let ecSigner = JWTKeyCollection()
        await ecSigner.add(ecdsa: ec)
        #expect(try await ecVerifier.authenticate(bearer: try await ecSigner.sign(claims)).userId == "u1")
        await #expect(throws: APIError.self) { try await ecVerifier.authenticate(bearer: try await signer.sign(claims)) }

        // A PEM file's key type chooses the algorithm (`api.jwt_public_key_path`).
        #expect(try JWTVerifier.key(publicKeyPEM: rsaPublicPEM).algorithm == "RS256")
        #expect(try JWTVerifier.key(publicKeyPEM: ec.publicKey.pemRepresentation).algorithm == "ES256")
        #expect(throws: APIConfigurationError.self) { try JWTVerifier.key(publicKeyPEM: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----") }
    }

    @Test func introspectionAnswersAreCachedBriefly() async throws {
        let endpoint = FakeIntrospection()
        let clock = TestClock()
        var configuration = IntrospectionConfiguration(url: "https://auth.example/introspect", clientId: "herald", clientSecret: "s3cret")
        configuration.cacheTTL = .seconds(30)
        let introspector = TokenIntrospector(configuration: configuration, transport: endpoint, logger: Logger(label: "test"), now: { clock.now })
        let guid = "3F9B04DA-B46F-40F5-ACBD-9A4B3FAECD5B"
        endpoint.answer(status: 200, #"{"active": true, "sub": "119973638970", "zone": "w1", "exp": \#(Int(clock.now.timeIntervalSince1970) + 3600)}"#)

        #expect(try await introspector.authenticate(bearer: guid) == Identity(userId: "119973638970", zoneId: "w1"))
        #expect(try await introspector.authenticate(bearer: guid).userId == "119973638970")
        #expect(endpoint.calls == 1)
        let request = try #require(endpoint.lastRequest)
        #expect(String(decoding: request.body, as: UTF8.self) == "token=\(guid)&token_type_hint=access_token")
        #expect(request.headers.contains { $0.0 == "Authorization" && $0.1 == "Basic " + Data("herald:s3cret".utf8).base64EncodedString() })

        clock.advance(31)
        #expect(try await introspector.authenticate(bearer: guid).userId == "119973638970")
        #expect(endpoint.calls == 2)

        // Never cached beyond the token's exp.
        endpoint.answer(status: 200, #"{"active": true, "sub": "u2", "exp": \#(Int(clock.now.timeIntervalSince1970) + 5)}"#)
        _ = try await introspector.authenticate(bearer: "short-lived")
        clock.advance(6)
        await #expect(throws: APIError.self) { try await introspector.authenticate(bearer: "short-lived") }
        #expect(endpoint.calls == 4)
    }

    @Test func introspectionFailuresAre401Or503() async throws {
        let endpoint = FakeIntrospection()
        let introspector = TokenIntrospector(
            configuration: IntrospectionConfiguration(url: "https://auth.example/introspect"), transport: endpoint, logger: Logger(label: "test")
        )
        func code(_ token: String) async -> String? {
            do {
                _ = try await introspector.authenticate(bearer: token)
                return nil
            } catch {
                return error.code.rawValue
            }
        }
        endpoint.answer(status: 200, #"{"active": false}"#)
        #expect(await code("t1") == "invalid_token")
        endpoint.answer(status: 200, #"{"active": true}"#)
        #expect(await code("t2") == "invalid_token")
        endpoint.answer(status: 500, "oops")
        #expect(await code("t3") == "auth_unavailable")
        endpoint.answer(status: 200, "<html>")
        #expect(await code("t4") == "auth_unavailable")
        endpoint.fail()
        #expect(await code("t5") == "auth_unavailable")
        #expect(endpoint.calls == 5)

        // Through the API: 503 with Retry-After, never 401.
        try await APIFixture.with(authenticator: BearerAuthenticator(jwt: nil, opaque: introspector)) { api in
            let reply = try await api.client.send(.get, "/v1/me/settings", token: "3F9B04DA-B46F-40F5-ACBD-9A4B3FAECD5B")
            #expect(reply.status == 503)
            #expect(reply.errorCode == "auth_unavailable")
            #expect(reply.headers[.retryAfter] != nil)
        }
    }

    @Test func opaqueAndJWTTokensGoToTheirCheckers() async throws {
        let endpoint = FakeIntrospection()
        endpoint.answer(status: 200, #"{"active": true, "sub": "guid-user"}"#)
        let introspector = TokenIntrospector(
            configuration: IntrospectionConfiguration(url: "https://auth.example/introspect"), transport: endpoint, logger: Logger(label: "test")
        )
        let both = BearerAuthenticator(jwt: try await JWTVerifier(configuration: TestTokens.jwtConfiguration), opaque: introspector)
        #expect(try await both.authenticate(bearer: "3F9B04DA-B46F-40F5-ACBD-9A4B3FAECD5B").userId == "guid-user")
        #expect(try await both.authenticate(bearer: try await TestTokens.token("jwt-user")).userId == "jwt-user")
        #expect(endpoint.calls == 1)
    }

    @Test func rateLimitPerUser() async throws {
        try await APIFixture.with(configure: { $0.rateLimit = RateLimitConfiguration(requestsPerSecond: 0.01, burst: 3) }) { api in
            let u1 = try await TestTokens.token("u1")
            for _ in 0..<3 { #expect(try await api.client.send(.get, "/v1/me/settings", token: u1).status == 200) }
            let limited = try await api.client.send(.get, "/v1/me/settings", token: u1)
            #expect(limited.status == 429)
            #expect(limited.errorCode == "rate_limited")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // Another user has their own bucket.
            #expect(try await api.client.send(.get, "/v1/me/settings", token: try await TestTokens.token("u2")).status == 200)
        }
    }

    @Test func tokenBucketRefillsAndStaysBounded() {
        let clock = TestClock()
        let limiter = TokenBucketLimiter(configuration: RateLimitConfiguration(requestsPerSecond: 2, burst: 2)) { clock.instant }
        #expect(limiter.acquire("a") == nil)
        #expect(limiter.acquire("a") == nil)
        #expect(limiter.acquire("a") == .milliseconds(500))
        clock.advance(0.5)
        #expect(limiter.acquire("a") == nil)
        var bounded = RateLimitConfiguration(requestsPerSecond: 1, burst: 1)
        bounded.maxTrackedUsers = 10
        let small = TokenBucketLimiter(configuration: bounded) { clock.instant }
        for user in 0..<100 { _ = small.acquire("user\(user)") }
        #expect(small.trackedKeys <= 11)
    }
}

/// A controllable wall clock and monotonic instant.
final class TestClock: Sendable {
    private let offset = Mutex<Double>(0)
    private let startDate = Date()
    private let startInstant = ContinuousClock.now

    var now: Date { startDate.addingTimeInterval(offset.withLock { $0 }) }
    var instant: ContinuousClock.Instant { startInstant + .milliseconds(Int64(offset.withLock { $0 } * 1000)) }
    func advance(_ seconds: Double) { offset.withLock { $0 += seconds } }
}

/// An introspection endpoint that answers what it is told and counts calls.
final class FakeIntrospection: IntrospectionTransport {
    struct Request: Sendable {
        var headers: [(String, String)]
        var body: [UInt8]
    }

    private let state = Mutex<(status: Int, body: String, fails: Bool, calls: Int, last: Request?)>((200, "{}", false, 0, nil))

    func answer(status: Int, _ body: String) { state.withLock { $0 = (status, body, false, $0.calls, $0.last) } }
    func fail() { state.withLock { $0.fails = true } }
    var calls: Int { state.withLock { $0.calls } }
    var lastRequest: Request? { state.withLock { $0.last } }

    struct Down: Error {}

    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async throws -> IntrospectionHTTPResponse {
        let (status, text, fails) = state.withLock { state in
            state.calls += 1
            state.last = Request(headers: headers, body: body)
            return (state.status, state.body, state.fails)
        }
        if fails { throw Down() }
        return IntrospectionHTTPResponse(status: status, body: Array(text.utf8))
    }
}
