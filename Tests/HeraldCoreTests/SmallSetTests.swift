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

    /// Membership and `contains(where:)` answer as a `Set`'s at every size: empty, one element
    /// (kept inline), a few (scanned), many (hashed).
    @Test func answersAsASetDoesAtEverySize() {
        for size in [0, 1, 2, 7, 8, 9, 30] {
            var small = SmallSet<Int>()
            var reference = Set<Int>()
            small.reserveCapacity(size)
            for value in 0..<size {
                #expect(small.insert(value * 3) == reference.insert(value * 3).inserted)
                let again = small.insert(value * 3)
                #expect(!again, "a second insert of \(value * 3) at size \(size)")
            }
            #expect(small.isEmpty == reference.isEmpty, "size \(size)")
            for probe in -1..<(size * 3 + 2) {
                #expect(small.contains(probe) == reference.contains(probe), "contains \(probe) at size \(size)")
                #expect(small.contains(where: { $0 == probe }) == reference.contains(probe), "contains(where:) \(probe) at size \(size)")
            }
        }
    }
}
