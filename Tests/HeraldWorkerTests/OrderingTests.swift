import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Per-user order: 5,000 events for 200 users, interleaved, arrive at the sender in publish
/// order for every user, with one lane and with eight.
@Suite("Per-user order", .timeLimit(.minutes(3)))
struct OrderingTests {
    /// `backlogAfter` 1: nearly every delivery of a user with one waiting goes through the
    /// backlog (written, read back), which must keep the same order.
    @Test(arguments: [(1, 64), (8, 64), (8, 1)])
    func everyUsersDeliveriesArriveInPublishOrder(lanes: Int, backlogAfter: Int) async throws {
        try await WorkerFixture.with { fixture in
            let users = 200
            let events = 5_000
            try await fixture.store.devices.importDevices(
                (0..<users).map {
                    TestEvents.device("d\($0)", user: "u\($0)", platform: $0 % 2 == 0 ? .ios : .android)
                })
            var generator = SystemRandomNumberGenerator()
            let owners = (0..<events).map { _ in Int.random(in: 0..<users, using: &generator) }
            try await fixture.publish(
                owners.enumerated().map { index, user in
                    TestEvents.xml(users: ["u\(user)"], parameters: ["\(index)", "RUB"], sequence: index)
                })
            let sender = RecordingSender()
            var configuration = fixture.configuration(lanes: lanes)
            configuration.backlogAfter = backlogAfter
            try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                try await waitUntil("\(events) deliveries", timeout: .seconds(120)) {
                    // Acknowledged is not sent when deliveries wait in the backlog.
                    worker.statistics.acked == events && sender.count == events
                }
            }
            let sent = sender.sent
            #expect(sent.count == events)
            var lastByUser: [String: Int] = [:]
            var violations = 0
            for delivery in sent {
                let sequence = try #require(Self.sequence(delivery))
                if let last = lastByUser[delivery.userId], last >= sequence { violations += 1 }
                lastByUser[delivery.userId] = sequence
            }
            #expect(violations == 0, "deliveries out of publish order for a user")
            #expect(lastByUser.count == Set(owners).count)
        }
    }

    /// The event's first parameter (its publish index), from either payload shape.
    static func sequence(_ delivery: RecordingSender.Sent) -> Int? {
        if let aps = delivery.json["aps"] as? [String: Any], let params = aps["acme_params"] as? [[String: String]] {
            return params.first?["value"].flatMap(Int.init)
        }
        if let message = delivery.json["message"] as? [String: Any], let data = message["data"] as? [String: String],
            let params = data["params"], let list = try? JSONSerialization.jsonObject(with: Data(params.utf8)) as? [[String: String]]
        {
            return list.first?["value"].flatMap(Int.init)
        }
        return nil
    }
}
