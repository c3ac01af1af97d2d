import Foundation

/// Binary parameter encodings, used where they are exact and simpler than text: timestamps
/// (no formatting or time-zone questions) and arrays (no quoting rules to get wrong).
enum PostgresBinaryCodec {
    /// Seconds between 1970-01-01 and PostgreSQL's epoch 2000-01-01 (UTC).
    static let postgresEpochOffset: Double = 946_684_800

    static func int64(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    static func int32(_ value: Int32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// timestamptz: microseconds since 2000-01-01 UTC, rounded to the nearest microsecond.
    static func timestamp(_ date: Date) -> [UInt8] {
        if date == .distantFuture { return int64(.max) }  // 'infinity'
        if date == .distantPast { return int64(.min) }  // '-infinity'
        let micros = ((date.timeIntervalSince1970 - postgresEpochOffset) * 1_000_000).rounded()
        return int64(Int64(micros))
    }

    /// A one-dimensional array (`array_recv` format); `nil` elements are NULL.
    static func array(_ elements: [[UInt8]?], elementType: PostgresDataType, arrayType: PostgresDataType) -> PostgresValue {
        var out: [UInt8] = []
        out.reserveCapacity(20 + elements.reduce(0) { $0 + 4 + ($1?.count ?? 0) })
        let hasNull = elements.contains { $0 == nil }
        out += int32(elements.isEmpty ? 0 : 1)
        out += int32(hasNull ? 1 : 0)
        out += int32(Int32(bitPattern: elementType.rawValue))
        if !elements.isEmpty {
            out += int32(Int32(elements.count))
            out += int32(1)
            for element in elements {
                if let element {
                    out += int32(Int32(element.count))
                    out += element
                } else {
                    out += int32(-1)
                }
            }
        }
        return PostgresValue(dataType: arrayType, format: .binary, bytes: out)
    }
}
