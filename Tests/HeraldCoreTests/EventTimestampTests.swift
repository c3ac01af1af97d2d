import Foundation
import PropertyBased
import Testing

@testable import HeraldCore

@Suite struct EventTimestampTests {
    @Test func parsesTheSeedFormatExactly() throws {
        let t = try EventTimestamp(iso8601: "2014-04-30T17:32:47.4123771+03:00")
        #expect(t.ticksSinceEpoch == 13_988_683_674_123_771)
        #expect(t.utcOffsetSeconds == 10_800)
        #expect(t.description == "2014-04-30T17:32:47.4123771+03:00")
        #expect(abs(t.date.timeIntervalSince1970 - 1_398_868_367.4123771) < 1e-6)
    }

    @Test(arguments: [
        ("2014-04-30T14:32:47Z", "2014-04-30T14:32:47.0000000+00:00"),
        ("2014-04-30t14:32:47.1z", "2014-04-30T14:32:47.1000000+00:00"),
        ("2000-02-29T23:59:59.9999999-0130", "2000-02-29T23:59:59.9999999-01:30"),
        ("1969-12-31T23:59:59.5+14:00", "1969-12-31T23:59:59.5000000+14:00"),
        ("0001-01-01T00:00:00+00:00", "0001-01-01T00:00:00.0000000+00:00"),
        ("9999-12-31T23:59:59,25-12:00", "9999-12-31T23:59:59.2500000-12:00"),
    ])
    func acceptedForms(_ input: String, _ canonical: String) throws {
        #expect(try EventTimestamp(iso8601: input).description == canonical)
    }

    @Test(arguments: [
        "", "2014-04-30", "2014-04-30T17:32:47", "2014-04-30 17:32:47Z", "2014-4-30T17:32:47Z", "2014-04-30T17:32Z",
        "2014-04-30T17:32:47.Z", "2014-04-30T17:32:47.12345678Z", "2014-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
        "2014-00-10T00:00:00Z", "2014-13-10T00:00:00Z", "2014-04-31T00:00:00Z", "2014-04-30T24:00:00Z",
        "2014-04-30T23:60:00Z", "2014-04-30T23:59:60Z", "2014-04-30T17:32:47+15:00", "2014-04-30T17:32:47+03:60",
        "2014-04-30T17:32:47+3", "2014-04-30T17:32:47Zjunk", "0000-01-01T00:00:00Z", "２０14-04-30T17:32:47Z",
    ])
    func rejectedForms(_ input: String) {
        #expect(throws: EventTimestamp.FormatError.self) { try EventTimestamp(iso8601: input) }
    }

    /// description → parse is the identity over the whole supported range.
    @Test func canonicalTextRoundTrips() async {
        let minTicks: Int64 = -62_135_596_800 * 10_000_000 + 14 * 3600 * 10_000_000
        let maxTicks: Int64 = 253_402_300_799 * 10_000_000 - 14 * 3600 * 10_000_000
        await propertyCheck(count: 500, input: Gen.int64(in: minTicks...maxTicks), Gen.int(in: -56...56)) { ticks, quarter in
            let t = EventTimestamp(ticksSinceEpoch: ticks, utcOffsetSeconds: Int32(quarter * 900))
            #expect((try? EventTimestamp(iso8601: t.description)) == t)
        }
    }

    @Test func codableUsesTheText() throws {
        let t = try EventTimestamp(iso8601: "2014-04-30T17:32:47.4123771+03:00")
        let data = try JSONEncoder().encode([t])
        #expect(String(decoding: data, as: UTF8.self) == "[\"2014-04-30T17:32:47.4123771+03:00\"]")
        #expect(try JSONDecoder().decode([EventTimestamp].self, from: data) == [t])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([EventTimestamp].self, from: Data("[\"x\"]".utf8)) }
    }
}
