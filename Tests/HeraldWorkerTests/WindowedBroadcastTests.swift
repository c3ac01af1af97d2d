import Foundation
import HeraldAMQP
import HeraldCore
import HeraldTesting
import HeraldWorker
import Testing

@testable import HeraldStore

/// Broadcasts whose audience does not fit in memory (`worker.broadcast_memory`; 0 here) are
/// written down, acknowledged, and sent a window of devices at a time; a worker that goes away
/// in the middle is resumed by another once its lease runs out.
@Suite("Broadcasts in windows", .timeLimit(.minutes(2)))
struct WindowedBroadcastTests {
    /// 300 users with a device each in zone w1 and 100 in another zone, one device subscribed
    /// for three users and one whose token is dead: a zone broadcast reaches each w1 device
    /// exactly once, in windows of 40 devices, 2 at once; the message is acknowledged once the
    /// broadcast is written down; the broadcast's row ends done with the audience it selected,
    /// and the journal has a sent row for each device.
    @Test func aBroadcastBeyondTheMemoryLimitReachesEachDeviceOnceInWindows() async throws {
        try await WorkerFixture.with { fixture in
            var devices = (0..<400).map { TestEvents.device("d\($0)", user: "u\($0)", zone: $0 < 300 ? "w1" : "w2") }
            devices += ["u1", "u2", "u3"].map { TestEvents.device("shared", user: $0, zone: "w1") }
            devices.append(TestEvents.device("dead", user: "u-dead", zone: "w1"))
            try await fixture.store.devices.importDevices(devices)
            _ = try await fixture.store.devices.markTokenDead(deviceId: "dead", token: "token-dead", reason: "Unregistered")
            let expected = Set((0..<300).map { "d\($0)" } + ["shared"])
            let sender = RecordingSender(delay: .milliseconds(1))
            var configuration = Self.inWindows(fixture.configuration(lanes: 16))
            configuration.broadcastWindow = 40
            configuration.broadcastWindows = 2
            try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                try await fixture.publish(Self.broadcast(zone: "w1"), messageID: "news-1")
                try await waitUntil("every device", timeout: .seconds(60)) { sender.count >= expected.count }
                try await fixture.waitUntilSettled(worker)
                #expect(worker.statistics.acked >= 1)
            }
            let reached = sender.sent.map(\.deviceId)
            #expect(Set(reached) == expected)
            #expect(reached.count == expected.count, "each device once")
            #expect(sender.sent.allSatisfy { $0.userId == "0" })
            let journalId = try #require(try await fixture.store.journal.history(of: [MessageKey(text: "news-1")]).first?.id)
            let progress = try #require(try await fixture.store.broadcasts.progress(ofMessage: journalId))
            #expect(progress == BroadcastProgress(done: true, selected: Int64(expected.count), sent: Int64(expected.count), waiting: 0, failed: 0))
            // What the support desk sees (herald deliveries show, the admin API).
            #expect(try await fixture.store.lookup.message(key: "news-1").copies.map(\.broadcast) == [progress])
            #expect(try await fixture.depth(fixture.topology.queue) == 0)
        }
    }

    /// The broadcast's message is not held while its windows go out: a targeted push published
    /// after it is delivered while the broadcast is still under way (providers answer in 20 ms,
    /// the broadcast's 400 devices take seconds).
    @Test func otherUsersPushesDoNotWaitForTheBroadcast() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices((0..<400).map { TestEvents.device("d\($0)", user: "u\($0)", zone: "w1") })
            try await fixture.store.devices.importDevices([TestEvents.device("lone", user: "lone")])
            let sender = RecordingSender(delay: .milliseconds(20))
            var configuration = Self.inWindows(fixture.configuration(lanes: 16))
            configuration.broadcastWindow = 50
            configuration.broadcastWindows = 1
            try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                try await fixture.publish(Self.broadcast(zone: "w1"), messageID: "news-2")
                try await waitUntil("the broadcast is under way", timeout: .seconds(20)) { sender.count >= 10 }
                try await fixture.publish(TestEvents.xml(users: ["lone"], sequence: 1))
                try await waitUntil("the lone user's push", timeout: .seconds(20)) { sender.sent.contains { $0.deviceId == "lone" } }
                let broadcastSoFar = sender.sent.filter { $0.deviceId != "lone" }.count
                #expect(broadcastSoFar < 400, "the targeted push waited for the whole broadcast")
                try await waitUntil("every device", timeout: .seconds(60)) { sender.count >= 401 }
                try await fixture.waitUntilSettled(worker)
            }
            #expect(Set(sender.sent.map(\.deviceId)).count == 401)
            #expect(sender.count == 401)
        }
    }

    /// A worker that goes away in the middle of a broadcast (its task cancelled while sends are
    /// frozen: its lease is not given up) leaves it to the next worker once the lease runs out:
    /// every device gets the broadcast, a device twice only if it was in flight then, and then
    /// with the same delivery key (the collapse id).
    @Test func aBroadcastWhoseWorkerWentAwayIsResumedByAnother() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices((0..<300).map { TestEvents.device("d\($0)", user: "u\($0)") })
            let sender = RecordingSender()
            var configuration = Self.inWindows(fixture.configuration(lanes: 8))
            configuration.broadcastWindow = 30
            configuration.broadcastWindows = 2
            configuration.broadcastLease = .seconds(1)
            let first = try WorkerService(configuration: configuration, store: fixture.store, sender: sender.source("first"), logger: fixture.logger)
            let firstTask = Task { try await first.run() }
            try await waitUntil("the first worker consumes", timeout: .seconds(20)) { first.isConsuming }
            sender.hold(at: 100)
            try await fixture.publish(Self.broadcast(zone: nil), messageID: "news-3")
            try await waitUntil("100 pushes, then frozen", timeout: .seconds(30)) { sender.count >= 100 }
            #expect(try await fixture.depth(fixture.topology.queue) == 0, "acknowledged once written down")
            sender.close(source: "first")
            firstTask.cancel()
            try await WorkerFixture.join(firstTask)
            sender.release()
            #expect(try await fixture.store.broadcasts.unfinishedCount() == 1)

            try await fixture.withWorker(sender: sender.source("second"), configuration: configuration) { second in
                try await waitUntil("every device", timeout: .seconds(60)) { Set(sender.sent.map(\.deviceId)).count >= 300 }
                try await fixture.waitUntilSettled(second)
            }
            let byDevice = Dictionary(grouping: sender.sent, by: \.deviceId)
            #expect(byDevice.count == 300)
            let repeated = byDevice.values.filter { $0.count > 1 }
            #expect(repeated.count <= configuration.broadcastWindow * configuration.broadcastWindows, "only what was in flight")
            #expect(repeated.allSatisfy { Set($0.map(\.key)).count == 1 }, "a repeat has the same collapse id")
            #expect(try await fixture.store.broadcasts.unfinishedCount() == 0)
        }
    }

    /// With partitions every partition copy is a broadcast of its own, sent in windows, each
    /// keeping the devices whose selected subscription belongs to its users: each device once
    /// across all of them, a device subscribed for users of three partitions too.
    @Test func partitionCopiesInWindowsReachEachDeviceOnce() async throws {
        try await PartitionTests.withPartitionedFixture { fixture in
            var devices = (0..<120).map { TestEvents.device("d\($0)", user: "u\($0)", zone: "w1") }
            devices += ["u1", "u2", "u3"].map { TestEvents.device("shared", user: $0, zone: "w1") }
            try await fixture.store.devices.importDevices(devices)
            let sender = RecordingSender()
            var configuration = Self.inWindows(fixture.configuration(lanes: 16))
            configuration.partitions = PartitionTests.partitions
            configuration.ingestRetryInterval = .milliseconds(300)
            configuration.broadcastWindow = 20
            let workers = try (0..<2).map { n in
                try WorkerService(configuration: configuration, store: fixture.store, sender: sender.source("w\(n)"), logger: fixture.logger)
            }
            try await PartitionTests.running(workers) {
                try await waitUntil("both workers consume", timeout: .seconds(20)) { workers.allSatisfy(\.isConsuming) }
                try await fixture.publish(Self.broadcast(zone: "w1"), messageID: "news-4")
                try await waitUntil("every device", timeout: .seconds(60)) { Set(sender.sent.map(\.deviceId)).count >= 121 }
                try await fixture.waitUntilSettled(workers[0], workers[1], queues: PartitionTests.queues(fixture))
            }
            #expect(sender.sent.count == 121, "each device once: \(sender.sent.count)")
            #expect(Set(sender.sent.map(\.deviceId)).count == 121)
        }
    }

    static func inWindows(_ base: WorkerConfiguration) -> WorkerConfiguration {
        var configuration = base
        configuration.broadcastMemoryLimit = 0
        return configuration
    }

    static func broadcast(zone: String?) -> Data {
        let filter = zone.map { #"<Filter name="ZoneId" value="\#($0)" />"# } ?? ""
        return Data(
            """
            <PushNotification><EventId>TransferIssued</EventId><EventType>News</EventType>\
            <EventDateTime>2015-04-30T17:32:00.0000001+03:00</EventDateTime><EventFilters>\
            <Filter name="UserId" value="0" />\(filter)</EventFilters>\
            <EventParams><EventParam name="a" value="1" /><EventParam name="b" value="RUB" /></EventParams></PushNotification>
            """.utf8)
    }
}
