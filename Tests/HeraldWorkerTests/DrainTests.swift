import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// `herald drain` on a queue of 1,000 messages exits 0 with the queue empty.
@Suite("Drain", .timeLimit(.minutes(2)))
struct DrainTests {
    @Test func drainEmptiesAQueueOfAThousandMessagesAndExitsZero() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices((0..<50).map { TestEvents.device("d\($0)", user: "u\($0)") })
            try await fixture.publish((0..<1_000).map { TestEvents.xml(users: ["u\($0 % 50)"], parameters: ["\($0)"], sequence: $0) })
            #expect(try await fixture.depth(fixture.topology.queue) == 1_000)
            let result = try HeraldCLI.run(
                ["drain", "--timeout", "90s", "--sender", "null"], environment: WorkerProcessEnvironment.make(fixture), timeout: .seconds(110)
            )
            #expect(result.status == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
            #expect(result.stdout.contains("Drain complete"))
            #expect(result.stdout.contains("consumed 1000, delivered 1000"))
            #expect(try await fixture.depth(fixture.topology.queue) == 0)
        }
    }

    @Test func drainGivesUpAfterItsTimeoutWithWhatRemains() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d1", user: "u1")])
            // A timeout shorter than the first poll: the drain gives up at once and says so.
            try await fixture.publish(TestEvents.xml(users: ["u1"], sequence: 1))
            let result = try HeraldCLI.run(
                ["drain", "--timeout", "1ms", "--sender", "null"], environment: WorkerProcessEnvironment.make(fixture), timeout: .seconds(60)
            )
            #expect(result.status == 1)
            #expect(result.stdout.contains("NOT complete"))
        }
    }
}
