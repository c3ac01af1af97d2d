import Foundation

/// Decodes bus messages (seed 000's XML or JSON) into ``Event``s.
///
/// What the worker calls for every delivery from RabbitMQ: `decode(body, contentType:)`. The
/// checks run cheapest first: size, encoding (BOMs, NUL bytes), UTF-8 validity, then the parser
/// chosen by the content type or, when that names neither format, by the first significant
/// byte (`<` XML, `{` JSON). Hostile input is safe: no DTDs or external entities are processed,
/// depth and size are bounded, and parsing never recurses.
///
/// A `Sendable` value with no state; call it from any thread. Throws only
/// ``EventDecodingError``, whose `description` is the dead-letter reason.
public struct EventDecoder: Sendable {
    public var limits: DecodingLimits

    public init(limits: DecodingLimits = .default) {
        self.limits = limits
    }

    /// Decodes one message body. `contentType` is the AMQP `content_type` property, if any.
    public func decode(_ data: Data, contentType: String? = nil) throws(EventDecodingError) -> DecodedEvent {
        // Every bus message comes as `Data`: the checks and both readers read it where it is (a
        // copy into an array first cost an allocation and a copy per message). `withUnsafeBytes`
        // only rethrows: the typed error comes through a `Result`.
        let decoded = data.withUnsafeBytes { raw in
            raw.withMemoryRebound(to: UInt8.self) { bytes in
                Result { () throws(EventDecodingError) in try decode(bytes, contentType: contentType) }
            }
        }
        return try decoded.get()
    }

    /// Decodes one message body. `contentType` is the AMQP `content_type` property, if any.
    public func decode(_ bytes: [UInt8], contentType: String? = nil) throws(EventDecodingError) -> DecodedEvent {
        try bytes.withUnsafeBufferPointer { buffer throws(EventDecodingError) in try decode(buffer, contentType: contentType) }
    }

    private func decode(_ bytes: UnsafeBufferPointer<UInt8>, contentType: String?) throws(EventDecodingError) -> DecodedEvent {
        guard bytes.count <= limits.maxDocumentBytes else { throw tooLarge(bytes.count) }
        let format = try EventDecoder.detectFormat(bytes, contentType: contentType)
        switch format {
        case .xml: return try XMLEventReader.read(bytes, limits: limits)
        case .json:
            // The JSON grammar has no BOM; a leading UTF-8 BOM is tolerated and skipped.
            return try JSONEventReader.read(UnsafeBufferPointer(rebasing: bytes[UTF8Validator.byteOrderMarkLength(bytes)...]), limits: limits)
        }
    }

    private func tooLarge(_ count: Int) -> EventDecodingError {
        EventDecodingError(code: .tooLarge, field: "document", reason: "\(count) bytes is more than the limit of \(limits.maxDocumentBytes) bytes")
    }

    /// Checks the encoding and decides the format: the content type when it names XML or JSON,
    /// otherwise the first byte after an optional UTF-8 BOM and whitespace.
    public static func detectFormat(_ bytes: [UInt8], contentType: String?) throws(EventDecodingError) -> EventFormat {
        try bytes.withUnsafeBufferPointer { buffer throws(EventDecodingError) in try detectFormat(buffer, contentType: contentType) }
    }

    static func detectFormat(_ bytes: UnsafeBufferPointer<UInt8>, contentType: String?) throws(EventDecodingError) -> EventFormat {
        let first = bytes.first, second = bytes.count > 1 ? bytes[1] : nil
        if (first == 0xFF && second == 0xFE) || (first == 0xFE && second == 0xFF) || bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) {
            throw EventDecodingError(code: .unsupportedEncoding, field: "document", reason: "UTF-16/UTF-32 byte order mark; send UTF-8", offset: 0)
        }
        if let nul = bytes.prefix(4).firstIndex(of: 0) {
            throw EventDecodingError(
                code: .unsupportedEncoding, field: "document", reason: "NUL byte near the start: UTF-16/UTF-32 or binary data; send UTF-8", offset: nul)
        }
        if let contentType, let charset = charset(of: contentType),
            !["utf-8", "utf8", "us-ascii"].contains(where: { charset.asciiCaseInsensitiveEquals($0) })
        {
            throw EventDecodingError(code: .unsupportedEncoding, field: "content-type", reason: "charset \(charset.prefix(32)) is not supported; send UTF-8")
        }
        if let bad = UTF8Validator.firstInvalidOffset(bytes) {
            throw EventDecodingError(code: .invalidUTF8, field: "document", reason: "invalid UTF-8 at byte \(bad)", offset: bad)
        }
        if let contentType, let format = EventFormat(contentType: contentType) { return format }
        var k = UTF8Validator.byteOrderMarkLength(bytes)
        while k < bytes.count, bytes[k] == 0x20 || bytes[k] == 0x09 || bytes[k] == 0x0A || bytes[k] == 0x0D { k += 1 }
        guard k < bytes.count else {
            throw EventDecodingError(code: .unknownFormat, field: "document", reason: "empty document")
        }
        switch bytes[k] {
        case UInt8(ascii: "<"): return .xml
        case UInt8(ascii: "{"), UInt8(ascii: "["): return .json
        default:
            throw EventDecodingError(code: .unknownFormat, field: "document", reason: "neither XML (starts with '<') nor JSON (starts with '{')", offset: k)
        }
    }

    private static func charset(of contentType: String) -> String? {
        guard contentType.utf8.contains(UInt8(ascii: ";")) else { return nil }
        for part in contentType.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, String(pair[0]).trimmingSpaces.asciiCaseInsensitiveEquals("charset") {
                var value = String(pair[1]).trimmingSpaces
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
                return value
            }
        }
        return nil
    }
}
