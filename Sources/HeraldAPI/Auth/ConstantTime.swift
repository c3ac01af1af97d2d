import HeraldCore

/// Comparison of secrets whose timing reveals nothing: both sides are hashed first (so their
/// lengths do not show either) and the digests are compared without an early exit.
enum ConstantTime {
    static func equals(_ lhs: String, _ rhs: String) -> Bool {
        let a = SHA256.hash(Array(lhs.utf8))
        let b = SHA256.hash(Array(rhs.utf8))
        var difference: UInt8 = 0
        for index in 0..<min(a.count, b.count) { difference |= a[index] ^ b[index] }
        return difference == 0 && a.count == b.count
    }
}
