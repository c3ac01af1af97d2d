import Foundation
import HeraldCore
import Testing

@testable import HeraldDelivery

@Suite struct APNsNotificationIDTests {
    @Test func theIDIsAVersion8UUIDTakenFromTheKey() throws {
        let key = DeliveryKey(messageKey: "m1", deviceId: "d1", userId: "u1")
        let id = key.apnsID
        let uuid = try #require(UUID(uuidString: id))
        #expect(id == uuid.uuidString.lowercased())
        let hex = id.replacingOccurrences(of: "-", with: "")
        let keyPrefix = Array(key.rawValue.prefix(32))
        for (index, digit) in hex.enumerated() where index != 12 && index != 16 {
            #expect(digit == keyPrefix[index])
        }
        #expect(Array(hex)[12] == "8")
        #expect("89ab".contains(Array(hex)[16]))
    }

    @Test func aResendKeepsItsIDAndOtherDeliveriesDoNot() {
        let key = DeliveryKey(messageKey: "m1", deviceId: "d1", userId: "u1")
        #expect(key.apnsID == DeliveryKey(rawValue: key.rawValue).apnsID)
        let others = (0..<1000).map { DeliveryKey(messageKey: "m1", deviceId: "d\($0)", userId: "u1").apnsID }
        #expect(Set(others).count == others.count)
    }

    @Test func aKeyThatIsNotHexStillGivesAUUID() throws {
        for raw in ["", "short", String(repeating: "Z", count: 64), "-" + String(repeating: "0", count: 63)] {
            let id = DeliveryKey(rawValue: raw).apnsID
            #expect(UUID(uuidString: id) != nil, "\(raw)")
        }
    }
}
