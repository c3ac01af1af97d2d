/// A value that keeps its hash, computed once when it is made.
///
/// For the keys the hot path looks up several times per delivery (the lanes', the tracker's,
/// the broadcast audience's table of users): a lookup then hashes one word instead of the
/// value's strings, and a probe that meets another key compares the stored hashes before the
/// values (comparing two user ids reads their bytes elsewhere in memory, often a cache miss in
/// a table of 10,000 users). The hash is this process's (`Hasher`'s seed): never stored or sent.
@frozen
public struct Prehashed<Value: Hashable & Sendable>: Hashable, Sendable {
    public let value: Value
    @usableFromInline let hash: Int

    @inlinable
    public init(_ value: Value) {
        self.value = value
        var hasher = Hasher()
        hasher.combine(value)
        hash = hasher.finalize()
    }

    @inlinable
    public static func == (lhs: Prehashed, rhs: Prehashed) -> Bool { lhs.hash == rhs.hash && lhs.value == rhs.value }

    @inlinable
    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    /// Where a table places the key: the stored hash mixed with the table's seed by a
    /// multiply-xorshift finalizer, so that a probe runs no `Hasher` (its set-up and SipHash
    /// rounds were most of a lookup by a key that already has its hash). `Hashable`'s
    /// customization point for this, as the standard library's integers use it; equal keys
    /// have equal stored hashes, so they land alike.
    @inlinable
    public func _rawHashValue(seed: Int) -> Int {
        var x = UInt64(truncatingIfNeeded: hash ^ seed)
        x = (x ^ (x &>> 33)) &* 0xff51_afd7_ed55_8ccd
        x = (x ^ (x &>> 33)) &* 0xc4ce_b9fe_1a85_ec53
        return Int(truncatingIfNeeded: x ^ (x &>> 33))
    }
}
