import Foundation
import HeraldAMQP
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// A few outcomes wait up to `recordLinger` for more before they are written (one statement for
/// tens of answers): a lone one is still recorded and its message acknowledged once the wait is
/// over, and a graceful stop writes the waiting ones at once instead of waiting them out.
@Suite("Record linger", .timeLimit(.minutes(2)))
struct RecordLingerTests {
    @Test func aLoneOutcomeIsRecordedWhenTheWaitIsOver() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices([TestEvents.device("d0", user: "u0")])
            try await fixture.publish([TestEvents.xml(users: ["u0"], parameters: ["0"], sequence: 0)])
            let sender = RecordingSender()
            var configuration = fixture.configuration()
            configuration.recordLinger = .seconds(3)
            try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                try await waitUntil("the push is sent", timeout: .seconds(10)) { sender.count == 1 }
                #expect(worker.statistics.messagesInFlight == 1, "its outcome waits for company, so its message is not acknowledged yet")
                try await waitUntil("the message is acknowledged", timeout: .seconds(10)) { worker.statistics.messagesInFlight == 0 }
            }
            #expect(try await fixture.depth(fixture.topology.queue) == 0)
            #expect(sender.count == 1)
        }
    }

    @Test func aGracefulStopWritesTheWaitingOutcomesAtOnce() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices((0..<3).map { TestEvents.device("d\($0)", user: "u\($0)") })
            try await fixture.publish((0..<3).map { TestEvents.xml(users: ["u\($0)"], parameters: ["\($0)"], sequence: $0) })
            let sender = RecordingSender()
            var configuration = fixture.configuration()
            configuration.recordLinger = .seconds(60)
            let stopped = try await fixture.withWorker(sender: sender, configuration: configuration) { _ in
                try await waitUntil("the pushes are sent", timeout: .seconds(10)) { sender.count == 3 }
                return ContinuousClock.now
            }
            #expect(ContinuousClock.now - stopped < .seconds(20), "the stop does not wait out the linger")
            #expect(try await fixture.depth(fixture.topology.queue) == 0, "recorded, then acknowledged")
            #expect(sender.count == 3)
        }
    }

    @Test func aNegativeLingerIsRefused() {
        var configuration = WorkerConfiguration(amqp: AMQPConfiguration())
        configuration.recordLinger = .milliseconds(-1)
        #expect(throws: WorkerError.self) { try configuration.validate() }
        configuration.recordLinger = .zero
        #expect((try? configuration.validate()) != nil, "zero writes at once")
    }
}
