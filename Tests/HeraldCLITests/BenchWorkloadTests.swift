import ArgumentParser
import Foundation
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

    @Test func benchRefusesMoreBroadcastDevicesThanUsersAndNoGroups() {
        #expect(throws: (any Error).self) { try BenchCommand.parse(["--users", "10", "--broadcast-devices", "20"]) }
        #expect(throws: (any Error).self) { try BenchCommand.parse(["--broadcast-groups", "0"]) }
        #expect(throws: Never.self) { try BenchCommand.parse(["--users", "100", "--broadcast-devices", "20", "--broadcast-groups", "50"]) }
    }
}
