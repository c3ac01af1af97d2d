/// Statement parameters laid out the way libpq's `paramValues`/`paramLengths`/`paramFormats`
/// arrays want them: the bytes in one owned buffer, the three arrays built on the stack for
/// the duration of the call only.
///
/// Text values get a NUL terminator (libpq ignores lengths for text); one containing a NUL
/// byte is refused here rather than silently truncated.
struct ParameterBuffer {
    let values: [PostgresValue]
    private var buffer: [UInt8] = []

    init(_ values: [PostgresValue]) throws(PostgresError) {
        self.values = values
        var size = 1
        for (index, value) in values.enumerated() {
            guard let bytes = value.bytes else { continue }
            guard bytes.count <= Int32.max else {
                throw PostgresError(code: .invalidParameter, message: "parameter $\(index + 1) is larger than 2 GiB")
            }
            if value.format == .text, bytes.contains(0) {
                throw PostgresError(
                    code: .invalidParameter,
                    message: "parameter $\(index + 1) contains a NUL character, which PostgreSQL text cannot hold"
                )
            }
            size += bytes.count + (value.format == .text ? 1 : 0)
        }
        buffer.reserveCapacity(size)
        for value in values {
            guard let bytes = value.bytes else { continue }
            buffer.append(contentsOf: bytes)
            if value.format == .text { buffer.append(0) }
        }
        // Never empty, so the base address exists and every offset (even of an empty binary
        // value at the end) points inside the allocation.
        buffer.append(0)
    }

    var count: Int32 { Int32(values.count) }

    /// The parameter type OIDs, the prepared-statement cache key.
    var types: [UInt32] { values.map(\.dataType.rawValue) }

    /// Whether the parameter types equal `types` (without allocating).
    func hasTypes(_ types: [UInt32]) -> Bool {
        types.count == values.count && zip(types, values).allSatisfy { $0 == $1.dataType.rawValue }
    }

    /// Calls `body` with the C arrays; the pointers are valid only during the call.
    func withUnsafeParameters<R>(
        _ body: (
            _ values: UnsafePointer<UnsafePointer<CChar>?>?, _ lengths: UnsafePointer<Int32>?,
            _ formats: UnsafePointer<Int32>?
        ) throws(PostgresError) -> R
    ) throws(PostgresError) -> R {
        let count = values.count
        let result: Result<R, PostgresError> = buffer.withUnsafeBytes { raw in
            let base = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
            return withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { pointers in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: count * 2) { numbers in
                    var offset = 0
                    for (index, value) in values.enumerated() {
                        numbers[count + index] = value.format.rawValue
                        if let bytes = value.bytes {
                            pointers[index] = UnsafePointer(base + offset)
                            numbers[index] = Int32(bytes.count)
                            offset += bytes.count + (value.format == .text ? 1 : 0)
                        } else {
                            pointers[index] = nil
                            numbers[index] = 0
                        }
                    }
                    return Result { () throws(PostgresError) -> R in
                        try body(
                            UnsafePointer(pointers.baseAddress), UnsafePointer(numbers.baseAddress),
                            numbers.baseAddress.map { UnsafePointer($0 + count) }
                        )
                    }
                }
            }
        }
        return try result.get()
    }
}
