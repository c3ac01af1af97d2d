import Crypto

extension SHA256 {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The SHA-256 of `bytes` as 64 lowercase hex characters: the form of message keys and
    /// delivery keys (stored, and sent as collapse ids), token fingerprints and cache keys.
    public static func hexDigest(_ bytes: some Sequence<UInt8>) -> String {
        var hasher = SHA256()
        let hashed: Void? = bytes.withContiguousStorageIfAvailable { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        if hashed == nil { hasher.update(data: Array(bytes)) }
        var hex: [UInt8] = []
        hex.reserveCapacity(2 * SHA256.byteCount)
        for byte in hasher.finalize() {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
