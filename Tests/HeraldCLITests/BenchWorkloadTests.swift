import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore
import Testing

@testable import herald

@Suite struct BenchWorkloadTests {
    private func workload(groups: Int) -> BenchWorkload {
        var workload = BenchWorkload(runID: "t", users: 1_000, broadcastDevices: 20, eventId: "TransferIssued")
        workload.broadcastGroups = groups
        return workload
    }

    /// The branches the broadcast events of the first `events` name, by count.
    private func broadcastBranches(_ workload: BenchWorkload, events: Int, spread: Bool) -> [String: Int] {
        var counts: [String: Int] = [:]
        for index in 0..<events where workload.kind(index) == .broadcast {
            let body = String(decoding: workload.body(index, salt: 1, spread: spread), as: UTF8.self)
            let branch = body.components(separatedBy: #"name="BranchId" value=""#)[1].prefix { $0 != "\"" }
            counts[String(branch), default: 0] += 1
        }
        return counts
    }

    @Test func recordWorkloadSendsEveryBroadcastToTheFirstGroup() {
        let workload = workload(groups: 50)
        #expect(broadcastBranches(workload, events: 2_000, spread: false) == ["bench-t-b": 100])
    }

    @Test func spreadBroadcastsTakeTurnsOnEveryGroup() {
        let workload = workload(groups: 50)
        let counts = broadcastBranches(workload, events: 2_000, spread: true)
        #expect(counts.count == 50)
        #expect(counts.values.allSatisfy { $0 == 2 })
        #expect(Set(counts.keys) == Set((0..<50).map(workload.branch)))
    }

    @Test func eachGroupHoldsBroadcastDevicesDevices() {
        let registrations = workload(groups: 3).registrations
        #expect(registrations.filter { $0.branchId == "bench-t-b" }.count == 20)
        #expect(registrations.filter { $0.branchId == "bench-t-b2" }.count == 20)
        #expect(registrations.filter { $0.branchId != nil }.count == 60)
        #expect(registrations[60].branchId == nil)
    }

    @Test func perUserOrderBoundFollowsTheRoundTripAndTheGroups() throws {
        let workload = workload(groups: 50)
        #expect(workload.perUserOrderBound(roundTrip: .zero, spread: false) == nil)
        let bound = try #require(workload.perUserOrderBound(roundTrip: .milliseconds(30), spread: false))
        #expect(abs(bound - 20 / 0.03) < 0.001)
        let spread = try #require(workload.perUserOrderBound(roundTrip: .milliseconds(30), spread: true))
        #expect(abs(spread - 50 * 20 / 0.03) < 0.001)
    }

    /// ../shared/bench/workload.py ports the workload byte for byte, so that the Python worker
    /// and the bare consumers of compare.sh take the same events: the SHA-256 of its first 200
    /// bodies (run "t", 1,000 users, 20 broadcast devices, salt 2), computed with it.
    @Test func bodiesAreThoseOfThePythonPort() {
        let bodies = (0..<200).reduce(into: Data()) { $0 += workload(groups: 1).body($1, salt: 2) }
        #expect(DeliveryKey.messageKey(forBody: bodies) == "cf2c5e9d8a6fb47be38757b0249edf1937312c7f806dc63d4df414c8baf001d7")
    }

    /// A three-user event that draws one user twice reaches two: 100,000 events of the default
    /// workload salted 2 (compare.sh's Python worker's salt) make 224,998 deliveries, what that
    /// worker delivered in every round, not the nominal 225,000.
    @Test func deliveriesCountEachUserOnce() {
        let workload = BenchWorkload(runID: "t", users: 10_000, broadcastDevices: 20, eventId: "TransferIssued")
        #expect((0..<100_000).reduce(0) { $0 + workload.nominalDeliveries($1) } == 225_000)
        #expect((0..<100_000).reduce(0) { $0 + workload.deliveries($1, salt: 2) } == 224_998)
        let repeated = (0..<100_000).filter { workload.kind($0) == .multi && Set(workload.recipients($0, salt: 2)).count < 3 }
        #expect(repeated.count == 2)
        for index in repeated { #expect(workload.deliveries(index, salt: 2) == 2) }
    }

    @Test func expectedDeliveriesHaveOneKeyPerEvent() {
        let workload = workload(groups: 1)
        let expected = workload.expectedDeliveries(count: 500, salt: 7)
        #expect(expected.count == 500)
        #expect(expected.values.reduce(0, +) == (0..<500).reduce(0) { $0 + workload.deliveries($1, salt: 7) })
        let key = MessageKey(text: DeliveryKey.messageKey(forBody: workload.body(3, salt: 7))).digest
        #expect(expected[key] == workload.deliveries(3, salt: 7))
    }

    @Test func benchRefusesMoreBroadcastDevicesThanUsersAndNoGroups() {
        #expect(throws: (any Error).self) { try BenchCommand.parse(["--users", "10", "--broadcast-devices", "20"]) }
        #expect(throws: (any Error).self) { try BenchCommand.parse(["--broadcast-groups", "0"]) }
        #expect(throws: Never.self) { try BenchCommand.parse(["--users", "100", "--broadcast-devices", "20", "--broadcast-groups", "50"]) }
    }
}
