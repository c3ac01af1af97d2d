import Foundation

/// `EventDateTime`: an ISO 8601 local date-time with a UTC offset and up to seven fractional
/// digits, as .NET writes `DateTimeOffset` ("2014-04-30T17:32:47.4123771+03:00").
///
/// Kept exactly: the instant in 100-nanosecond ticks (the .NET resolution, which `Date`'s
/// `Double` cannot hold losslessly) and the producer's offset, so that printing gives the same
/// text back. Parsing is hand-written (no `DateFormatter`, no regular expression): it runs for
/// every event. The offset is required; an instant without one is ambiguous.
public struct EventTimestamp: Sendable, Hashable, Codable, CustomStringConvertible {
    /// 100-ns ticks since 1970-01-01T00:00:00Z.
    public let ticksSinceEpoch: Int64
    /// The producer's offset from UTC in seconds (`+03:00` → 10800).
    public let utcOffsetSeconds: Int32

    /// A reason why a text is not a valid timestamp; no input text is included.
    public struct FormatError: Error, Sendable, Hashable {
        public let reason: String
    }

    public static let ticksPerSecond: Int64 = 10_000_000

    public init(ticksSinceEpoch: Int64, utcOffsetSeconds: Int32) {
        self.ticksSinceEpoch = ticksSinceEpoch
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// The timestamp of `date`, truncated to 100 ns, with the given offset.
    public init(date: Date, utcOffsetSeconds: Int32 = 0) {
        let ticks = (date.timeIntervalSince1970 * Double(EventTimestamp.ticksPerSecond)).rounded(.down)
        self.init(ticksSinceEpoch: Int64(ticks), utcOffsetSeconds: utcOffsetSeconds)
    }

    /// Parses `YYYY-MM-DDThh:mm:ss[.f{1,7}](Z|±hh:mm|±hhmm)`.
    public init(iso8601 text: some StringProtocol) throws(FormatError) {
        self = try EventTimestamp.parse(Array(text.utf8))
    }

    /// The instant as a `Date` (sub-microsecond precision may be rounded).
    public var date: Date {
        Date(timeIntervalSince1970: Double(ticksSinceEpoch) / Double(EventTimestamp.ticksPerSecond))
    }

    /// The canonical text: always seven fractional digits and a `±hh:mm` offset (`Z` for zero
    /// is written `+00:00`, as .NET does).
    public var description: String {
        let local = ticksSinceEpoch + Int64(utcOffsetSeconds) * EventTimestamp.ticksPerSecond
        let (days, dayTicks) = local.floorDivided(by: 86_400 * EventTimestamp.ticksPerSecond)
        let (y, m, d) = EventTimestamp.civil(fromDays: days)
        let seconds = dayTicks / EventTimestamp.ticksPerSecond
        let fraction = dayTicks % EventTimestamp.ticksPerSecond
        let offset = abs(Int(utcOffsetSeconds))
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(Int(seconds / 3600), 2)):\(pad(Int(seconds / 60 % 60), 2)):\(pad(Int(seconds % 60), 2))"
            + ".\(pad(Int(fraction), 7))\(utcOffsetSeconds < 0 ? "-" : "+")\(pad(offset / 3600, 2)):\(pad(offset / 60 % 60, 2))"
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try EventTimestamp(iso8601: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.reason)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    // MARK: - Parsing

    static func parse(_ b: [UInt8]) throws(FormatError) -> EventTimestamp {
        var i = 0
        func digits(_ count: Int, _ what: String) throws(FormatError) -> Int {
            guard i + count <= b.count else { throw FormatError(reason: "truncated: \(what) expected") }
            var v = 0
            for _ in 0..<count {
                let c = b[i]
                guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { throw FormatError(reason: "\(what) must be \(count) digits") }
                v = v * 10 + Int(c - UInt8(ascii: "0"))
                i += 1
            }
            return v
        }
        func expect(_ c: UInt8, _ what: String) throws(FormatError) {
            guard i < b.count, b[i] == c else { throw FormatError(reason: "\(what) expected") }
            i += 1
        }
        let year = try digits(4, "year")
        try expect(UInt8(ascii: "-"), "'-' after the year")
        let month = try digits(2, "month")
        try expect(UInt8(ascii: "-"), "'-' after the month")
        let day = try digits(2, "day")
        guard i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t") else { throw FormatError(reason: "'T' between date and time expected") }
        i += 1
        let hour = try digits(2, "hour")
        try expect(UInt8(ascii: ":"), "':' after the hour")
        let minute = try digits(2, "minute")
        try expect(UInt8(ascii: ":"), "':' after the minute")
        let second = try digits(2, "second")
        var fraction = 0
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            var count = 0
            while i < b.count, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") {
                count += 1
                guard count <= 7 else { throw FormatError(reason: "more than 7 fractional second digits") }
                fraction = fraction * 10 + Int(b[i] - UInt8(ascii: "0"))
                i += 1
            }
            guard count > 0 else { throw FormatError(reason: "fractional seconds expected after '.'") }
            for _ in count..<7 { fraction *= 10 }
        }
        guard i < b.count else { throw FormatError(reason: "UTC offset (Z or ±hh:mm) is required") }
        var offset = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            let oh = try digits(2, "offset hours")
            if i < b.count, b[i] == UInt8(ascii: ":") { i += 1 }
            let om = try digits(2, "offset minutes")
            guard oh <= 14, om <= 59, oh * 60 + om <= 14 * 60 else { throw FormatError(reason: "UTC offset out of range (±14:00)") }
            offset = sign * (oh * 3600 + om * 60)
        default:
            throw FormatError(reason: "UTC offset (Z or ±hh:mm) expected after the time")
        }
        guard i == b.count else { throw FormatError(reason: "unexpected characters after the UTC offset") }
        guard year >= 1 else { throw FormatError(reason: "year out of range") }
        guard (1...12).contains(month) else { throw FormatError(reason: "month out of range") }
        guard (1...daysIn(month: month, year: year)).contains(day) else { throw FormatError(reason: "day out of range for the month") }
        guard hour <= 23, minute <= 59, second <= 59 else { throw FormatError(reason: "time of day out of range") }
        let days = Int64(daysFromCivil(year: year, month: month, day: day))
        let localSeconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        let ticks = (localSeconds - Int64(offset)) * ticksPerSecond + Int64(fraction)
        return EventTimestamp(ticksSinceEpoch: ticks, utcOffsetSeconds: Int32(offset))
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

extension Int64 {
    /// Floor division and the matching non-negative remainder.
    func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        var q = self / divisor
        var r = self % divisor
        if r < 0 { q -= 1; r += divisor }
        return (q, r)
    }
}
