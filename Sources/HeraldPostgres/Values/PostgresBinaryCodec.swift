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
        array(elements, elementType: elementType, arrayType: arrayType, byteCount: { $0.pointee?.count }, append: { $0.append(contentsOf: $1.pointee!) })
    }

    /// A one-dimensional array written straight into one buffer (no intermediate array per
    /// element): `byteCount` is an element's encoded length, `nil` for NULL; `append` writes
    /// exactly that many bytes of a non-NULL element. The elements are read in place, through
    /// pointers (a loop over the array, or an element passed by value, copies each one out:
    /// a retain and a release apiece for strings and bytes, twice, and the journal's
    /// statements carry several such arrays per delivery).
    static func array<Element>(
        _ elements: [Element], elementType: PostgresDataType, arrayType: PostgresDataType, byteCount: (UnsafePointer<Element>) -> Int?,
        append: (inout [UInt8], UnsafePointer<Element>) -> Void
    ) -> PostgresValue {
        elements.withUnsafeBufferPointer { elements in
            var lengths: [Int32] = []
            lengths.reserveCapacity(elements.count)
            var total = 20
            var hasNull = false
            for index in elements.indices {
                if let count = byteCount(elements.baseAddress! + index) {
                    lengths.append(Int32(count))
                    total += 4 + count
                } else {
                    lengths.append(-1)
                    total += 4
                    hasNull = true
                }
            }
            var out: [UInt8] = []
            out.reserveCapacity(total)
            appendInt32(&out, elements.isEmpty ? 0 : 1)
            appendInt32(&out, hasNull ? 1 : 0)
            appendInt32(&out, Int32(bitPattern: elementType.rawValue))
            if !elements.isEmpty {
                appendInt32(&out, Int32(elements.count))
                appendInt32(&out, 1)
                for index in elements.indices {
                    appendInt32(&out, lengths[index])
                    if lengths[index] >= 0 { append(&out, elements.baseAddress! + index) }
                }
            }
            return PostgresValue(dataType: arrayType, format: .binary, bytes: out)
        }
    }

    /// A string's UTF-8 bytes, copied from its storage in one go.
    static func appendUTF8(_ out: inout [UInt8], _ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil { out.append(contentsOf: text.utf8) }
    }

    static func appendInt32(_ out: inout [UInt8], _ value: Int32) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    static func appendInt64(_ out: inout [UInt8], _ value: Int64) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }
}
