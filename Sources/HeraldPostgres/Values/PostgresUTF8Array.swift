/// A `text[]` parameter made of UTF-8 byte strings (`nil` is NULL), encoded without going
/// through `String`: for batches of bodies that exist as bytes already (the journal's
/// payloads). The bytes must be valid UTF-8 without NUL: the server checks and refuses the
/// statement otherwise.
public struct PostgresUTF8Array: PostgresBindable {
    public let postgresValue: PostgresValue

    public init(_ elements: [[UInt8]?]) {
        postgresValue = PostgresBinaryCodec.array(elements, elementType: .text, arrayType: .textArray)
    }

    public static var postgresDataType: PostgresDataType { .textArray }
}

/// A `bytea[]` parameter (`nil` is NULL), encoded in binary.
public struct PostgresByteaArray: PostgresBindable {
    public let postgresValue: PostgresValue

    public init(_ elements: [[UInt8]?]) {
        postgresValue = PostgresBinaryCodec.array(elements, elementType: .bytea, arrayType: .byteaArray)
    }

    public static var postgresDataType: PostgresDataType { .byteaArray }
}
