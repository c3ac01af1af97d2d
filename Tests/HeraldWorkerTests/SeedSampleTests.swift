import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// The seed's XML sample reaches exactly the matching devices, rendered in Russian with its
/// parameters in order.
@Suite("Seed sample", .timeLimit(.minutes(2)))
struct SeedSampleTests {
    @Test func theSeedSampleReachesExactlyTheMatchingDevicesRenderedInRussian() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([
                TestEvents.device("match-ios", user: "119973638970", platform: .ios, zone: "w1", branch: "101"),
                TestEvents.device("match-android", user: "119973638971", platform: .android, zone: "yessplay", branch: "101"),
                TestEvents.device("english", user: "119973638972", platform: .ios, culture: "en-US", zone: "w1", branch: "101"),
                TestEvents.device("other-zone", user: "119973638970", platform: .android, zone: "w2", branch: "101"),
                TestEvents.device("other-branch", user: "119973638971", platform: .ios, zone: "w1", branch: "102"),
                TestEvents.device("no-zone", user: "119973638972", platform: .ios),
                TestEvents.device("other-user", user: "119973638999", platform: .ios, zone: "w1", branch: "101"),
            ])
            let sender = RecordingSender()
            try await fixture.withWorker(sender: sender) { worker in
                try await fixture.publish(Data(TestEvents.seedSample.utf8))
                try await waitUntil("the sample is acknowledged", timeout: .seconds(20)) { worker.statistics.acked == 1 }
            }
            let sent = sender.sent
            #expect(Set(sent.map(\.deviceId)) == ["match-ios", "match-android"])
            #expect(sent.count == 2)
            let ios = try #require(sent.first { $0.deviceId == "match-ios" })
            let aps = try #require(ios.json["aps"] as? [String: Any])
            #expect(aps["alert"] as? String == "Перевод v1: v2 из v3")
            #expect(aps["acme_eid"] as? String == "EVENT 006")
            #expect(aps["acme_userid"] as? String == "119973638970")
            let params = try #require(aps["acme_params"] as? [[String: String]])
            #expect(params.map { $0["value"] } == ["v1", "v2", "v3"])
            let android = try #require(sent.first { $0.deviceId == "match-android" })
            let message = try #require(android.json["message"] as? [String: Any])
            let data = try #require(message["data"] as? [String: String])
            #expect(data["msg"] == "Перевод v1: v2 из v3")
            #expect(data["userid"] == "119973638971")
            #expect(message["token"] as? String == "token-match-android")
            // The journal has both as sent, at the devices' first position.
            for delivery in sent {
                let logged = try await fixture.store.notificationLog.entries(deviceId: delivery.deviceId, after: 0)
                #expect(logged.map(\.deliveryKey) == [delivery.key])
                #expect(logged.map(\.position) == [Int(delivery.position)])
            }
        }
    }
}
