import Testing

@testable import HeraldCore

@Suite struct FilterNameTests {
    /// Seed 000's names in any case become the canonical ones (and are known); any other name
    /// is kept as written (and is not).
    @Test func knownNamesAreCanonicalInAnyCaseOthersAreKeptAsWritten() {
        let spellings: [(String, FilterName)] = [
            ("UserId", .userId), ("userid", .userId), ("USERID", .userId), ("CultureId", .cultureId), ("cultureID", .cultureId),
            ("ZoneId", .zoneId), ("zoneid", .zoneId), ("BranchId", .branchId), ("BRANCHID", .branchId),
        ]
        for (spelling, canonical) in spellings {
            let name = FilterName(rawValue: spelling)
            #expect(name == canonical, "\(spelling)")
            #expect(name.rawValue == canonical.rawValue)
            #expect(name.isKnown, "\(spelling)")
        }
        for other in ["Segment", "User", "UserIds", "", " UserId"] {
            let name = FilterName(rawValue: other)
            #expect(name.rawValue == other)
            #expect(!name.isKnown, "\(other)")
        }
    }

    /// `0` with any number of zeros and surrounding spaces is the broadcast user; anything else
    /// (an empty or blank value, a space between zeros, another digit) is not.
    @Test func theBroadcastUserIsZerosBetweenSpaces() {
        for value in ["0", "00", " 0", "0 ", "  000  "] { #expect(Event.isBroadcastUserId(value), "\"\(value)\"") }
        for value in ["", " ", "0 0", "01", "10", "O", "\t0", "0\u{00A0}"] { #expect(!Event.isBroadcastUserId(value), "\"\(value)\"") }
    }
}
