import Crypto
import Foundation

/// A message as the journal knows it: the message key its delivery keys (collapse ids) are
/// made of, and the key of its journal row.
///
/// The message key is the AMQP `message-id`, or the SHA-256 of the body when the producer set
/// none. A partition copy (`worker.partitions`) has the key of its original but a row of its
/// own (``partitionSuffix``), so that copies of one message for different partitions are not
/// taken for repeats of each other. The row key is the first 16 bytes of the SHA-256 of
/// `text + suffix`: fixed width, whatever the producer's ids look like.
public struct MessageKey: Sendable, Hashable, CustomStringConvertible {
    /// The message key.
    public let text: String
    /// `"#p<p>/<K>"` for a partition copy, empty otherwise.
    public let partitionSuffix: String
    /// The journal row's key.
    public let digest: UUID

    public init(text: String, partitionSuffix: String = "") {
        self.text = text
        self.partitionSuffix = partitionSuffix
        var hasher = SHA256()
        var text = text, suffix = partitionSuffix
        text.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        if !suffix.isEmpty { suffix.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) } }
        digest = UUID(prefixOf: hasher.finalize())
    }

    public var description: String { text + partitionSuffix }

    /// How the journal stores ``text``: a body hash (64 lowercase hex digits, what a message
    /// without `message-id` has) as its 32 bytes, anything else as text. Half the bytes for the
    /// common case, on every message row.
    var stored: (text: String?, hash: [UInt8]?) {
        var text = text
        let hash: [UInt8]? = text.withUTF8 { utf8 in
            guard utf8.count == 64 else { return nil }
            // Every digit decoded, then one check: a non-digit decodes to a value above 15.
            var invalid: UInt8 = 0
            let bytes = [UInt8](unsafeUninitializedCapacity: 32) { bytes, count in
                for index in 0..<32 {
                    let high = Self.nibble(utf8[2 &* index]), low = Self.nibble(utf8[2 &* index &+ 1])
                    invalid |= high | low
                    bytes.initializeElement(at: index, to: high << 4 | low)
                }
                count = 32
            }
            return invalid & 0xF0 == 0 ? bytes : nil
        }
        return hash.map { (nil, $0) } ?? (text, nil)
    }

    /// The value of a lowercase hex digit; above 15 (0xFF) for any other byte.
    @inline(__always)
    private static func nibble(_ c: UInt8) -> UInt8 {
        let digit = c &- UInt8(ascii: "0")
        if digit < 10 { return digit }
        let letter = c &- UInt8(ascii: "a")
        return letter < 6 ? letter &+ 10 : 0xFF
    }

    /// SQL for a message row's key text (`m` being the `messages` row).
    static let textSQL = "coalesce(m.key_text, encode(m.key_hash, 'hex'))"
}
