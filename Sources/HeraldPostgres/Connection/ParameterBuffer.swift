/// Statement parameters laid out the way libpq's `paramValues`/`paramLengths`/`paramFormats`
/// arrays want them, in one owned buffer that outlives the call.
///
/// Text values get a NUL terminator (libpq ignores lengths for text); one containing a NUL
/// byte is refused here rather than silently truncated.
struct ParameterBuffer {
    private var buffer: [UInt8] = []
    private var offsets: [Int] = []
    private(set) var lengths: [Int32] = []
    private(set) var formats: [Int32] = []
    private(set) var types: [UInt32] = []

    init(_ values: [PostgresValue]) throws(PostgresError) {
        offsets.reserveCapacity(values.count)
        lengths.reserveCapacity(values.count)
        formats.reserveCapacity(values.count)
        types.reserveCapacity(values.count)
        buffer.reserveCapacity(values.reduce(1) { $0 + ($1.bytes?.count ?? 0) + 1 })
        for (index, value) in values.enumerated() {
            types.append(value.dataType.rawValue)
            formats.append(value.format.rawValue)
            guard let bytes = value.bytes else {
                offsets.append(-1)
                lengths.append(0)
                continue
            }
            guard bytes.count <= Int32.max else {
                throw PostgresError(code: .invalidParameter, message: "parameter $\(index + 1) is larger than 2 GiB")
            }
            if value.format == .text, bytes.contains(0) {
                throw PostgresError(
                    code: .invalidParameter,
                    message: "parameter $\(index + 1) contains a NUL character, which PostgreSQL text cannot hold"
                )
            }
            offsets.append(buffer.count)
            lengths.append(Int32(bytes.count))
            buffer.append(contentsOf: bytes)
            if value.format == .text { buffer.append(0) }
        }
        // Never empty, so the base address exists and every offset (even of an empty binary
        // value at the end) points inside the allocation.
        buffer.append(0)
    }

    var count: Int32 { Int32(offsets.count) }

    /// Calls `body` with the C arrays; the pointers are valid only during the call.
    func withUnsafeParameters<R>(
        _ body: (
            _ values: UnsafePointer<UnsafePointer<CChar>?>?, _ lengths: UnsafePointer<Int32>?,
            _ formats: UnsafePointer<Int32>?
        ) throws(PostgresError) -> R
    ) throws(PostgresError) -> R {
        let result: Result<R, PostgresError> = buffer.withUnsafeBytes { raw in
            let base = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { $0 < 0 ? nil : base + $0 }
            return pointers.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        Result { () throws(PostgresError) -> R in
                            try body(values.baseAddress, lengths.baseAddress, formats.baseAddress)
                        }
                    }
                }
            }
        }
        return try result.get()
    }
}
