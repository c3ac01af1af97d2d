import Crypto

/// Comparison of secrets whose timing reveals nothing: both sides are hashed first (so their
/// lengths do not show either) and the digests compared with swift-crypto's constant-time `==`.
enum ConstantTime {
    static func equals(_ lhs: String, _ rhs: String) -> Bool {
        SHA256.hash(data: Array(lhs.utf8)) == SHA256.hash(data: Array(rhs.utf8))
    }
}
