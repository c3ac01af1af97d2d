import Crypto

extension SHA256 {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The SHA-256 of `bytes` as 64 lowercase hex characters: the form of message keys and
    /// delivery keys (stored, and sent as collapse ids), token fingerprints and cache keys.
    public static func hexDigest(_ bytes: some Sequence<UInt8>) -> String {
        var hasher = SHA256()
        let hashed: Void? = bytes.withContiguousStorageIfAvailable { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        if hashed == nil { hasher.update(data: Array(bytes)) }
        let digest = hasher.finalize()
        // Written straight into the string's storage: one allocation per key (there is one for
        // every delivery). The digest is read in place: iterating it makes an array.
        return String(unsafeUninitializedCapacity: 2 * SHA256.byteCount) { hex in
            digest.withUnsafeBytes { digest in
                var at = 0
                for byte in digest {
                    hex[at] = hexDigits[Int(byte >> 4)]
                    hex[at + 1] = hexDigits[Int(byte & 0x0F)]
                    at += 2
                }
                return at
            }
        }
    }
}
