import Crypto
import Foundation
import HeraldAPI
import JWTKit

/// Signs bearer JWTs for the tests with a fixed HS256 secret (the API under test is configured
/// with ``jwtConfiguration``), and with other keys for the algorithm tests.
enum TestTokens {
    static let secret = Array("herald-test-secret-of-at-least-32-bytes!".utf8)
    static var jwtConfiguration: JWTConfiguration { JWTConfiguration(key: .hs256(secret: secret), leeway: .seconds(30)) }

    struct Claims: JWTPayload {
        var sub: SubjectClaim?
        var exp: ExpirationClaim?
        var nbf: NotBeforeClaim?
        var zone: String?
        var branch: String?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// An HS256 token for `user`, expiring `expiresIn` from now.
    static func token(
        _ user: String, zone: String? = nil, branch: String? = nil, expiresIn: TimeInterval = 600, notBefore: Date? = nil,
        secret: [UInt8] = secret
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims(user, zone: zone, branch: branch, expiresIn: expiresIn, notBefore: notBefore))
    }

    static func claims(_ user: String, zone: String? = nil, branch: String? = nil, expiresIn: TimeInterval = 600, notBefore: Date? = nil) -> Claims {
        Claims(
            sub: SubjectClaim(value: user), exp: ExpirationClaim(value: Date().addingTimeInterval(expiresIn)),
            nbf: notBefore.map { NotBeforeClaim(value: $0) }, zone: zone, branch: branch
        )
    }

    /// A token whose header says `alg: none`, with no signature.
    static func unsignedToken(_ user: String) throws -> String {
        func encode(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = encode(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let payload = encode(Data(#"{"sub":"\#(user)","exp":\#(Int(Date().timeIntervalSince1970) + 600)}"#.utf8))
        return "\(header).\(payload)."
    }
}

/// Push tokens of the right shapes.
enum PushTokens {
    /// A 64-hex-digit APNs token derived from `seed`.
    static func apns(_ seed: String) -> String {
        SHA256.hash(data: Data(seed.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// An FCM-looking registration token derived from `seed`.
    static func fcm(_ seed: String) -> String {
        "fcm-" + apns(seed).prefix(20) + ":APA91b" + apns(seed + "x")
    }
}
