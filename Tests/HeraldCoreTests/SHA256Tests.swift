@testable import HeraldCore
import Testing

@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("Зачисление средств.", "eb1706bff40eb0969e1bedbd1030f0cef124ec6955fdb3cd3d868a1d1503a403"),
    ])
    func knownVectors(_ input: String, _ digest: String) {
        #expect(SHA256.hexDigest(Array(input.utf8)) == digest)
    }

    /// Lengths around the 55/56/64-byte padding boundaries.
    @Test(arguments: [
        (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
        (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
        (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
        (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
        (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
        (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
        (128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"),
    ])
    func paddingBoundaries(_ count: Int, _ digest: String) {
        #expect(SHA256.hexDigest([UInt8](repeating: UInt8(ascii: "a"), count: count)) == digest)
    }

    @Test func millionAsInPieces() {
        var d = SHA256()
        for _ in 0..<1000 { d.update([UInt8](repeating: UInt8(ascii: "a"), count: 1000)) }
        let digest = d.finalize()
        #expect(digest.count == 32)
        let hex: String = digest.map { (byte: UInt8) -> String in
            let s = String(byte, radix: 16)
            return byte < 16 ? "0" + s : s
        }.joined()
        #expect(hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func deliveryKeyIsStableAndSeparatesItsParts() {
        let key = DeliveryKey(messageKey: "seed-000-sample", deviceId: "device-1", userId: "119973638970")
        #expect(key.rawValue == "a2115e2c8cf0c0241ed7abc0422acf6471f36df1fdde96ca288ce7cfbb60528e")
        #expect(key.rawValue.utf8.count == 64, "fits apns-collapse-id")
        #expect(key == DeliveryKey(messageKey: "seed-000-sample", deviceId: "device-1", userId: "119973638970"))
        #expect(DeliveryKey(messageKey: "ab", deviceId: "c", userId: "1") != DeliveryKey(messageKey: "a", deviceId: "bc", userId: "1"))
        #expect(DeliveryKey(messageKey: "m", deviceId: "d", userId: "1") != DeliveryKey(messageKey: "m", deviceId: "d", userId: "2"))
        #expect(DeliveryKey.messageKey(forBody: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
