import HeraldSupport
import Testing

/// Keys that keep their hash (``HeraldSupport/Prehashed``) place themselves in tables without a
/// `Hasher`: tables keyed by them must behave exactly as tables keyed by the plain values.
@Suite struct PrehashedTests {
    @Test func aTableKeyedByPrehashedValuesBehavesAsOneKeyedByTheValues() {
        var rng = SplitMix64(seed: 7)
        var plain: [String: Int] = [:]
        var prehashed: [Prehashed<String>: Int] = [:]
        for step in 0..<20_000 {
            let key = "user-\(Int.random(in: 0..<3_000, using: &rng))"
            if Bool.random(using: &rng) {
                plain[key] = step
                prehashed[Prehashed(key)] = step
            } else {
                #expect(plain.removeValue(forKey: key) == prehashed.removeValue(forKey: Prehashed(key)))
            }
        }
        #expect(prehashed.count == plain.count)
        for (key, value) in plain { #expect(prehashed[Prehashed(key)] == value) }
    }

    @Test func equalValuesLandAlikeAndDifferentOnesSpreadOut() {
        for seed in [0, 1, -1, 0x5555, Int.max] {
            #expect(Prehashed("42")._rawHashValue(seed: seed) == Prehashed("42")._rawHashValue(seed: seed))
        }
        // 4,096 keys into 1,024 buckets by the low bits: a table's placement. A well-mixed hash
        // leaves about 2 % of the buckets empty; a broken one piles keys into few buckets.
        let buckets = Set((0..<4_096).map { Prehashed("user-\($0)")._rawHashValue(seed: 12_345) & 1_023 })
        #expect(buckets.count > 950)
    }
}
