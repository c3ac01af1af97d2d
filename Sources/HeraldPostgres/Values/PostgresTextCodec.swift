import Foundation

/// Reading PostgreSQL's text output format (results are always requested as text) and
/// writing the few text inputs HeraldPostgres sends. Relies on the session settings every
/// connection is opened with: `DateStyle=ISO`, `TimeZone=UTC`, `bytea_output=hex`.
enum PostgresTextCodec {
    /// Shortest text that reads back as the same value; PostgreSQL's spellings for the
    /// special values.
    static func formatFloat<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return value.description
    }

    /// A signed decimal integer, without going through `String`.
    static func parseInteger(_ bytes: some Sequence<UInt8>) -> Int64? {
        var iterator = bytes.makeIterator()
        guard var byte = iterator.next() else { return nil }
        var negative = false
        if byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") {
            negative = byte == UInt8(ascii: "-")
            guard let next = iterator.next() else { return nil }
            byte = next
        }
        var value: Int64 = 0
        while true {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if o1 || o2 { return nil }
            value = next
            guard let following = iterator.next() else { break }
            byte = following
        }
        return value
    }

    /// `\x` followed by hex pairs (bytea's hex output).
    static func parseByteaHex(_ bytes: ArraySlice<UInt8>, cell: PostgresCell) throws(PostgresError) -> [UInt8] {
        guard bytes.count >= 2, bytes.count % 2 == 0,
            bytes[bytes.startIndex] == UInt8(ascii: "\\"), bytes[bytes.startIndex + 1] == UInt8(ascii: "x")
        else { throw cell.decodingError("bytea is not in hex format") }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count / 2 - 1)
        var index = bytes.startIndex + 2
        while index < bytes.endIndex {
            guard let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1]) else {
                throw cell.decodingError("bytea holds a non-hex digit")
            }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    /// A one-dimensional array literal: `{a,"b,c",NULL,"NULL",""}`, optionally preceded by
    /// bounds (`[0:2]={…}`). Unquoted `NULL` (any case) is SQL NULL; quoted `"NULL"` is text.
    static func parseArray(_ bytes: ArraySlice<UInt8>, cell: PostgresCell) throws(PostgresError) -> [String?] {
        var index = bytes.startIndex
        let end = bytes.endIndex
        func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
        }
        if index < end, bytes[index] == UInt8(ascii: "[") {
            guard let equals = bytes[index...].firstIndex(of: UInt8(ascii: "=")) else {
                throw cell.decodingError("malformed array bounds")
            }
            index = equals + 1
        }
        guard index < end, bytes[index] == UInt8(ascii: "{") else { throw cell.decodingError("malformed array: missing {") }
        index += 1
        var elements: [String?] = []
        while index < end, isSpace(bytes[index]) { index += 1 }
        if index < end, bytes[index] == UInt8(ascii: "}") {
            index += 1
            guard index == end else { throw cell.decodingError("malformed array: text after }") }
            return elements
        }
        while true {
            while index < end, isSpace(bytes[index]) { index += 1 }
            guard index < end else { throw cell.decodingError("malformed array: unterminated") }
            var element: [UInt8] = []
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while true {
                    guard index < end else { throw cell.decodingError("malformed array: unterminated quote") }
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\\") {
                        index += 1
                        guard index < end else { throw cell.decodingError("malformed array: dangling escape") }
                        element.append(bytes[index])
                    } else if byte == UInt8(ascii: "\"") {
                        index += 1
                        break
                    } else {
                        element.append(byte)
                    }
                    index += 1
                }
                elements.append(String(decoding: element, as: UTF8.self))
            } else if bytes[index] == UInt8(ascii: "{") {
                throw cell.decodingError("multi-dimensional arrays are not supported")
            } else {
                var escaped = false
                var lastSignificant = 0
                while index < end, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "}") {
                    if bytes[index] == UInt8(ascii: "\\") {
                        index += 1
                        guard index < end else { throw cell.decodingError("malformed array: dangling escape") }
                        escaped = true
                        element.append(bytes[index])
                        lastSignificant = element.count
                    } else {
                        element.append(bytes[index])
                        if !isSpace(bytes[index]) { lastSignificant = element.count }
                    }
                    index += 1
                }
                element.removeLast(element.count - lastSignificant)
                if !escaped, element.count == 4, String(decoding: element, as: UTF8.self).uppercased() == "NULL" {
                    elements.append(nil)
                } else {
                    elements.append(String(decoding: element, as: UTF8.self))
                }
            }
            while index < end, isSpace(bytes[index]) { index += 1 }
            guard index < end else { throw cell.decodingError("malformed array: unterminated") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { throw cell.decodingError("malformed array: expected , or }") }
            index += 1
            guard index == end else { throw cell.decodingError("malformed array: text after }") }
            return elements
        }
    }

    /// ISO output of timestamptz (`2024-05-01 12:34:56.789012+00`, `… BC`), timestamp (taken
    /// as UTC) and date; `infinity`/`-infinity` become `distantFuture`/`distantPast`.
    static func parseTimestamp(_ bytes: ArraySlice<UInt8>, cell: PostgresCell) throws(PostgresError) -> Date {
        var text = Array(bytes)
        if text == Array("infinity".utf8) { return .distantFuture }
        if text == Array("-infinity".utf8) { return .distantPast }
        var bc = false
        if text.count > 3, text.suffix(3) == Array(" BC".utf8)[...] {
            bc = true
            text.removeLast(3)
        }
        var index = 0
        func fail() -> PostgresError { cell.decodingError("malformed timestamp") }
        func digits(minimum: Int, maximum: Int) -> Int? {
            var value = 0
            var count = 0
            while index < text.count, count < maximum, text[index] >= 0x30, text[index] <= 0x39 {
                value = value * 10 + Int(text[index] - 0x30)
                index += 1
                count += 1
            }
            return count >= minimum ? value : nil
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < text.count, text[index] == byte else { return false }
            index += 1
            return true
        }
        guard var year = digits(minimum: 4, maximum: 9), expect(UInt8(ascii: "-")),
            let month = digits(minimum: 2, maximum: 2), expect(UInt8(ascii: "-")),
            let day = digits(minimum: 2, maximum: 2), (1...12).contains(month), (1...31).contains(day)
        else { throw fail() }
        if bc { year = 1 - year }
        var micros = Int64(daysFromCivil(year: year, month: month, day: day)) * 86_400_000_000
        if index < text.count {
            guard expect(UInt8(ascii: " ")) || expect(UInt8(ascii: "T")),
                let hour = digits(minimum: 2, maximum: 2), expect(UInt8(ascii: ":")),
                let minute = digits(minimum: 2, maximum: 2), expect(UInt8(ascii: ":")),
                let second = digits(minimum: 2, maximum: 2)
            else { throw fail() }
            micros += Int64(hour * 3600 + minute * 60 + second) * 1_000_000
            if expect(UInt8(ascii: ".")) {
                var fraction: Int64 = 0
                var scale: Int64 = 1_000_000
                var count = 0
                while index < text.count, text[index] >= 0x30, text[index] <= 0x39 {
                    if count < 6 {
                        scale /= 10
                        fraction += Int64(text[index] - 0x30) * scale
                    }
                    count += 1
                    index += 1
                }
                guard count > 0 else { throw fail() }
                micros += fraction
            }
            if index < text.count {
                if expect(UInt8(ascii: "Z")) {
                    // UTC
                } else {
                    let sign: Int64
                    if expect(UInt8(ascii: "+")) { sign = 1 } else if expect(UInt8(ascii: "-")) { sign = -1 } else { throw fail() }
                    guard let offsetHours = digits(minimum: 2, maximum: 2) else { throw fail() }
                    var offset = Int64(offsetHours) * 3600
                    if expect(UInt8(ascii: ":")) {
                        guard let offsetMinutes = digits(minimum: 2, maximum: 2) else { throw fail() }
                        offset += Int64(offsetMinutes) * 60
                        if expect(UInt8(ascii: ":")) {
                            guard let offsetSeconds = digits(minimum: 2, maximum: 2) else { throw fail() }
                            offset += Int64(offsetSeconds)
                        }
                    }
                    micros -= sign * offset * 1_000_000
                }
            }
        }
        guard index == text.count else { throw fail() }
        return Date(timeIntervalSince1970: Double(micros) / 1_000_000)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = (month + 9) % 12
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
