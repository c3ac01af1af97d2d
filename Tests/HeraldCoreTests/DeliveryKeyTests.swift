import HeraldCore
import Testing

/// Delivery and message keys are stored and sent as collapse ids: their bytes never change.
/// The expected values are the lowercase hex SHA-256 of the documented input, computed outside
/// Herald (Python's hashlib), so they pin both the input and the digest.
@Suite struct DeliveryKeyTests {
    @Test func deliveryKeyIsStableAndSeparatesItsParts() {
        let key = DeliveryKey(messageKey: "seed-000-sample", deviceId: "device-1", userId: "119973638970")
        // sha256(b"seed-000-sample\0device-1\0119973638970")
        #expect(key.rawValue == "a2115e2c8cf0c0241ed7abc0422acf6471f36df1fdde96ca288ce7cfbb60528e")
        #expect(key.rawValue.utf8.count == 64, "fits apns-collapse-id")
        #expect(key == DeliveryKey(messageKey: "seed-000-sample", deviceId: "device-1", userId: "119973638970"))
        #expect(DeliveryKey(messageKey: "ab", deviceId: "c", userId: "1") != DeliveryKey(messageKey: "a", deviceId: "bc", userId: "1"))
        #expect(DeliveryKey(messageKey: "m", deviceId: "d", userId: "1") != DeliveryKey(messageKey: "m", deviceId: "d", userId: "2"))
    }

    @Test func anAppOtherThanTheDefaultIsAFourthPart() {
        // sha256(b"m\0d\0u\0com.example.app")
        #expect(
            DeliveryKey(messageKey: "m", deviceId: "d", userId: "u", app: "com.example.app").rawValue
                == "57e34a4cd9e900d2c2fadf278d18f20b12f3beafaba4fe3657bdfd7bfca118ca")
    }

    @Test func messageKeyIsTheSHA256OfTheBody() {
        #expect(DeliveryKey.messageKey(forBody: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // A body that is not contiguous memory hashes the same as its bytes.
        let body = Array("Зачисление средств.".utf8)
        #expect(DeliveryKey.messageKey(forBody: body.lazy.map { $0 }) == "eb1706bff40eb0969e1bedbd1030f0cef124ec6955fdb3cd3d868a1d1503a403")
        #expect(DeliveryKey.messageKey(forBody: body) == "eb1706bff40eb0969e1bedbd1030f0cef124ec6955fdb3cd3d868a1d1503a403")
    }
}
