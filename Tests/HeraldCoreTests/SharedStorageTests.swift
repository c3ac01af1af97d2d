import Foundation
import Testing

@testable import HeraldCore

/// The structs kept behind one shared reference (``HeraldSupport/Shared``) still behave as values:
/// a change to a copy is the copy's alone, equality and hashing follow the values, and the coded
/// form keeps the keys it had as a plain struct.
@Suite struct SharedStorageTests {
    private func subscription() -> Subscription {
        Subscription(
            deviceId: "dev-1", token: "tok-1", platform: .ios, userId: "42", culture: "ru-RU", zoneId: "z", tags: ["wallet"], app: "com.example",
            deviceRef: 7)
    }

    @Test func aChangedCopyLeavesTheOriginalAsItWas() {
        let original = subscription()
        var copy = original
        copy.token = "tok-2"
        copy.tags.insert("account")
        #expect(original.token == "tok-1")
        #expect(original.tags == ["wallet"])
        #expect(copy.token == "tok-2")
        #expect(copy.tags == ["wallet", "account"])
        #expect(copy != original)
        copy.token = "tok-1"
        copy.tags = ["wallet"]
        // Equal values in different boxes: equal, with equal hashes.
        #expect(copy == original)
        #expect(copy.hashValue == original.hashValue)
        #expect(Set([copy, original]).count == 1)
    }

    @Test func codedWithThePlainStructsKeys() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try #require(String(data: try encoder.encode(subscription()), encoding: .utf8))
        #expect(
            json
                == #"{"app":"com.example","culture":"ru-RU","deviceId":"dev-1","deviceRef":7,"isEnabled":true,"mutedTags":[],"platform":"ios","tags":["wallet"],"token":"tok-1","userId":"42","zoneId":"z"}"#
        )
        #expect(try JSONDecoder().decode(Subscription.self, from: Data(json.utf8)) == subscription())

        // The metadata keeps its file's names (`private`, `silent`, `ttlSeconds`).
        let metadata = try JSONDecoder().decode(
            EventMetadata.self, from: Data(#"{"eventId":"E","priority":"high","private":true,"silent":false,"ttlSeconds":60}"#.utf8))
        #expect(metadata.isPrivate && !metadata.isSilent && metadata.timeToLiveSeconds == 60 && metadata.priority == .high)
        var changed = metadata
        changed.isPrivate = false
        #expect(metadata.isPrivate)
        #expect(try String(data: encoder.encode(changed), encoding: .utf8)?.contains(#""private":false"#) == true)
    }
}
