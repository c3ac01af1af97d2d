import Testing

@testable import HeraldCore

@Suite struct SmallSetTests {
    /// Past the linear limit it hashes: membership and "inserted" answers stay those of a `Set`.
    @Test func answersAsASetDoesAcrossTheLinearLimit() {
        var small = SmallSet<Int>()
        var reference = Set<Int>()
        #expect(small.isEmpty)
        var rng = SplitMix64(seed: 3)
        for _ in 0..<200 {
            let value = Int.random(in: 0..<40, using: &rng)
            #expect(small.insert(value) == reference.insert(value).inserted, "insert \(value)")
        }
        #expect(!small.isEmpty)
        for value in -5..<45 { #expect(small.contains(value) == reference.contains(value), "contains \(value)") }
    }
}
