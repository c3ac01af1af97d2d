import Crypto
import Foundation

extension UUID {
    /// The first 16 bytes of a SHA-256 digest: the fixed-width keys of `messages` and
    /// `message_payloads`.
    init(prefixOf digest: SHA256.Digest) {
        self = digest.withUnsafeBytes { bytes in
            UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        }
    }
}
