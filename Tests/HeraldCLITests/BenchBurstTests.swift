import Foundation
import HeraldCore
import HeraldStore
import Testing

@testable import herald

/// The pure parts of `herald bench --burst`: its shape, devices and events, the order check of
/// the sandbox's record, the journal's comparison, the figures and the verdicts.
@Suite struct BenchBurstTests {
    private let workload = BurstWorkload(runID: "t", shape: BurstShape(busyUsers: 2, busyPushes: 3, quietUsers: 3, delayMilliseconds: 30), eventId: "E")

    // MARK: Shape and workload

    @Test func theShapeIsValidatedWithAMessage() {
        #expect(BurstShape.problem(busyUsers: 1, busyPushes: 600, quietUsers: 300, delay: "30ms") == nil)
        #expect(BurstShape.problem(busyUsers: 1_000, busyPushes: 1_000, quietUsers: 0, delay: "0") == nil)
        #expect(BurstShape.problem(busyUsers: 0, busyPushes: 1, quietUsers: 0, delay: "30ms")?.contains("--busy-users") == true)
        #expect(BurstShape.problem(busyUsers: -1, busyPushes: 1, quietUsers: 3, delay: "30ms") != nil)
        #expect(BurstShape.problem(busyUsers: 1, busyPushes: 0, quietUsers: 3, delay: "30ms")?.contains("--busy-pushes") == true)
        #expect(BurstShape.problem(busyUsers: 1, busyPushes: 1, quietUsers: 3, delay: "soon")?.contains("--burst-delay") == true)
        #expect(BurstShape.problem(busyUsers: 1, busyPushes: 1, quietUsers: 3, delay: "2m")?.contains("--burst-delay") == true)
    }

    @Test func theFloorIsOneRoundTripPerPush() {
        let shape = BurstShape(busyUsers: 1, busyPushes: 600, quietUsers: 300, delayMilliseconds: 30)
        #expect(abs(shape.floorSeconds - 18) < 1e-9)
        #expect(shape.deliveries == 900)
    }

    @Test func theFirstBusyUserHasAnIPhoneAndQuietUsersAlternate() {
        #expect(workload.platform(.busy(0)) == .ios)
        #expect(workload.platform(.busy(1)) == .android)
        #expect((0..<3).filter { workload.platform(.quiet($0)) == .ios }.count == 2)
        let registrations = workload.registrations
        #expect(registrations.count == 5)
        #expect(Set(registrations.map(\.deviceId)).count == 5)
        #expect(Set(registrations.compactMap(\.token)).count == 5)
        #expect(registrations.allSatisfy { $0.deviceId.hasPrefix(workload.devicePrefix) && $0.zoneId == workload.zone })
        for index in 0..<5 { #expect(workload.deviceIndex(workload.user(deviceIndex: index)) == index) }
    }

    @Test func busyPushesArePublishedOneWholeBurstAfterTheOther() {
        let events = (0..<6).map(workload.busyEvent)
        #expect(events.map(\.k) == [0, 1, 2, 0, 1, 2])
        #expect(events.map(\.user) == [.busy(0), .busy(0), .busy(0), .busy(1), .busy(1), .busy(1)])
    }

    @Test func aPushCarriesItsPlaceInItsMessageIdAndItsParameters() {
        #expect(workload.messageId(.busy(1), 2) == "bench-t-busy1-2")
        #expect(workload.messageId(.quiet(0), 0) == "bench-t-quiet0-0")
        let body = String(decoding: workload.body(.busy(1), 2), as: UTF8.self)
        #expect(body.contains(#"<Filter name="UserId" value="bench-t-busy1" />"#))
        #expect(body.contains(#"value="burst-seq-2""#))
        #expect(workload.body(.busy(0), 1) != workload.body(.busy(1), 1))
    }

    // MARK: The sandbox's record

    private func apnsLine(_ token: String, _ k: Int) -> String {
        #"{"app":"com.example","body":{"aps":{"acme_eid":"E","acme_params":[{"name":"n","value":"burst-seq-\#(k)"}],"alert":"x"}},"connection":1,"headers":{"apns-topic":"com.example"},"path":"/3/device/\#(token)","provider":"apns","stream":3,"time":"2026-12-02T00:00:00.000Z","token":"\#(token)"}"#
    }

    private func fcmLine(_ token: String, _ k: Int) -> String {
        #"{"app":"p","body":{"message":{"android":{"priority":"high"},"data":{"eid":"E","params":"[{\"name\":\"n\",\"value\":\"burst-seq-\#(k)\"}]"},"token":"\#(token)"}},"connection":2,"headers":{},"path":"/v1/projects/p/messages:send","provider":"fcm","stream":5,"time":"2026-12-02T00:00:00.000Z","token":"\#(token)"}"#
    }

    @Test func aRecordLineGivesItsTokenAndPlace() throws {
        let apns = try #require(BurstOrder.parse(Array(apnsLine("abc", 17).utf8)))
        #expect(apns.token == "abc" && apns.k == 17)
        let fcm = try #require(BurstOrder.parse(Array(fcmLine("tok-1", 0).utf8)))
        #expect(fcm.token == "tok-1" && fcm.k == 0)
        #expect(BurstOrder.parse(Array(#"{"token":"abc","body":{}}"#.utf8)) == nil)
        #expect(BurstOrder.parse(Array("".utf8)) == nil)
    }

    private func order(_ lines: [String]) -> BurstOrder {
        var order = BurstOrder(workload: workload)
        for line in lines { order.take(line: Array(line.utf8)) }
        return order
    }

    private var everyPushInOrder: [String] {
        var lines: [String] = []
        for k in 0..<3 {
            lines.append(apnsLine(workload.token(.busy(0)), k))
            lines.append(fcmLine(workload.token(.busy(1)), k))
        }
        return lines
            + [0, 1, 2].map { workload.platform(.quiet($0)) == .ios ? apnsLine(workload.token(.quiet($0)), 0) : fcmLine(workload.token(.quiet($0)), 0) }
    }

    @Test func everyPushOnceInOrderIsNoDifference() {
        let order = order(everyPushInOrder)
        #expect(order.differences(workload).isEmpty)
        #expect(order.devices.map(\.received) == [3, 3, 1, 1, 1])
    }

    @Test func aPushAfterALaterOneIsOutOfOrder() {
        var lines = everyPushInOrder
        lines.swapAt(0, 2)  // busy0's place 1 before its place 0
        let differences = order(lines).differences(workload)
        #expect(differences == ["the sandbox accepted 1 pushes after a later one of the same user (e.g. bench-t-busy0)"])
    }

    @Test func aPushTwiceIsADuplicateAndAMissingOneIsMissing() {
        var lines = everyPushInOrder
        lines[1] = lines[3]  // busy1 gets place 1 twice and never place 0
        let differences = order(lines).differences(workload)
        #expect(differences.contains("the sandbox accepted 1 pushes twice (e.g. bench-t-busy1)"))
        #expect(differences.contains("1 pushes never reached the sandbox (e.g. bench-t-busy1)"))
        #expect(differences.count == 2)
    }

    @Test func aPushToAnotherTokenOrWithoutAPlaceIsNoneOfTheRuns() {
        let differences = order(everyPushInOrder + [apnsLine("someone-else", 0), #"{"token":"x"}"#]).differences(workload)
        #expect(differences == ["the sandbox accepted 2 pushes that are none of the run's"])
    }

    @Test func theRecordIsReadAcrossChunkBoundaries() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("burst-record-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        // Enough lines to span several megabyte chunks, the last one without a newline.
        let big = BurstWorkload(runID: "t", shape: BurstShape(busyUsers: 1, busyPushes: 6_000, quietUsers: 0, delayMilliseconds: 30), eventId: "E")
        let text = (0..<6_000).map { apnsLine(big.token(.busy(0)), $0) + String(repeating: " ", count: 300) }.joined(separator: "\n")
        try Data(text.utf8).write(to: file)
        var order = BurstOrder(workload: big)
        try order.read(recordAt: file.path)
        #expect(order.devices[0].received == 6_000)
        #expect(order.differences(big).isEmpty)
    }

    // MARK: The journal

    private func journal(_ change: (inout [String: BurstJournal.Device]) -> Void = { _ in }) -> [String: BurstJournal.Device] {
        var devices: [String: BurstJournal.Device] = [:]
        for user in workload.users {
            let n = workload.pushes(user)
            devices[workload.deviceId(user)] = BurstJournal.Device(rows: n, sent: n, distinct: n, misnumbered: 0, firstRecorded: Date(), lastRecorded: Date())
        }
        change(&devices)
        return devices
    }

    @Test func aJournalWithEveryPushSentOnceInOrderIsNoDifference() {
        #expect(BurstJournal.differences(journal(), workload: workload, workerSent: 9, deadLetters: 0, failed: 0).isEmpty)
    }

    @Test func whatTheJournalLacksOrHoldsWrongIsNamed() {
        let busy0 = workload.deviceId(.busy(0)), quiet2 = workload.deviceId(.quiet(2))
        let devices = journal {
            $0[busy0] = BurstJournal.Device(rows: 3, sent: 2, distinct: 2, misnumbered: 1, backlog: 1)
            $0[quiet2] = nil
        }
        let differences = BurstJournal.differences(devices, workload: workload, workerSent: 9, deadLetters: 1, failed: 0)
        #expect(
            differences == [
                "2 pushes are not in the journal (e.g. bench-t-busy0)",
                "1 journal rows are not sent (e.g. bench-t-busy0)",
                "1 journal rows repeat a push (e.g. bench-t-busy0)",
                "1 positions hold an earlier push than the position before (e.g. bench-t-busy0)",
                "1 of the run's deliveries are still in the backlog table",
                "1 messages dead-lettered",
                "the worker counted 9 deliveries sent, the journal holds 7",
            ])
    }

    // MARK: Figures and verdicts

    @Test func percentilesAreNearestRank() {
        let values = (1...100).map(Double.init)
        #expect(BenchResult.Burst.percentile(0.5, of: values) == 50)
        #expect(BenchResult.Burst.percentile(0.99, of: values) == 99)
        #expect(BenchResult.Burst.percentile(1, of: values) == 100)
        #expect(BenchResult.Burst.percentile(0.99, of: [7]) == 7)
        #expect(BenchResult.Burst.percentile(0.5, of: []) == nil)
    }

    private func result(busyUsers: Int = 1, quietUsers: Int = 4, lanes: Int = 64) -> BenchResult.Burst {
        BenchResult.Burst(
            shape: BurstShape(busyUsers: busyUsers, busyPushes: 600, quietUsers: quietUsers, delayMilliseconds: 30), lanes: lanes, prefetch: 300,
            backlog: true, backlogAfter: 64)
    }

    @Test func quietUsersPassWhenEveryPushIsOutWithinTwoSeconds() {
        var burst = result()
        burst.judgeQuiet([120, 2_000, 40, 900])
        #expect(burst.quietPass == true && burst.quietWithinTarget == 4)
        #expect(burst.quietP50Milliseconds == 120 && burst.quietMaxMilliseconds == 2_000)
        burst.judgeQuiet([120, 2_001, 40, 900])
        #expect(burst.quietPass == false && burst.quietWithinTarget == 3)
        burst.judgeQuiet([120, 40, 900])  // one never journaled
        #expect(burst.quietPass == false)
    }

    @Test func aBurstPassesWithinTenPercentOfTheFloor() {
        var burst = result()
        burst.judgeBusy([("u", 19.5)])
        #expect(burst.busyPass == true && abs((burst.busy[0].ratio ?? 0) - 19.5 / 18) < 1e-9)
        burst.judgeBusy([("u", 19.9)])
        #expect(burst.busyPass == false)
        burst.judgeBusy([("u", 15)])  // faster than one push in flight allows
        #expect(burst.busyPass == false)
        var shared = result(busyUsers: 100, lanes: 64)
        shared.judgeBusy((0..<100).map { ("u\($0)", 40.0) })
        #expect(shared.busyPass == nil)
        #expect(shared.lines.contains { $0.contains("not judged: 100 busy users share 64 lanes") })
    }

    @Test func aDatabaseWithLeftoversOrAnotherLockHolderIsRefused() {
        #expect(BenchPreflight.problem(backlogRows: 0, otherLockHolders: 0, discard: false) == nil)
        #expect(BenchPreflight.problem(backlogRows: 18_107, otherLockHolders: 0, discard: false)?.contains("holds 18107 deliveries") == true)
        #expect(BenchPreflight.problem(backlogRows: 18_107, otherLockHolders: 0, discard: true) == nil)
        #expect(BenchPreflight.problem(backlogRows: 0, otherLockHolders: 1, discard: true)?.contains("advisory locks") == true)
    }
}
