import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// A graceful stop finishes and acknowledges what is in flight; what was not started is
/// delivered by the next worker, and nothing twice.
@Suite("Shutdown", .timeLimit(.minutes(2)))
struct ShutdownTests {
    @Test func aGracefulStopMidRunLosesNothingAndRepeatsNothing() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices((0..<10).map { TestEvents.device("d\($0)", user: "u\($0)") })
            try await fixture.publish((0..<60).map { TestEvents.xml(users: ["u\($0 % 10)"], parameters: ["\($0)"], sequence: $0) })
            let sender = RecordingSender(delay: .milliseconds(100))
            let started = ContinuousClock.now
            try await fixture.withWorker(sender: sender, configuration: fixture.configuration(lanes: 4)) { _ in
                try await waitUntil("some deliveries", timeout: .seconds(20)) { sender.count >= 10 }
            }
            #expect(ContinuousClock.now - started < .seconds(15), "the stop is bounded")
            let firstRun = sender.count
            #expect(firstRun < 60)
            try await fixture.withWorker(sender: sender) { worker in
                try await waitUntil("the rest", timeout: .seconds(30)) { Set(sender.sent.map(\.key)).count == 60 }
                try await waitUntil("all acknowledged", timeout: .seconds(10)) { worker.statistics.messagesInFlight == 0 }
            }
            #expect(sender.count == 60, "nothing delivered twice")
            #expect(try await fixture.depth(fixture.topology.queue) == 0)
        }
    }

    @Test func aLostConnectionIsReestablishedAndTheRunFinishes() async throws {
        try await WorkerFixture.with { fixture in
            try await fixture.store.devices.importDevices((0..<10).map { TestEvents.device("d\($0)", user: "u\($0)") })
            try await fixture.publish((0..<200).map { TestEvents.xml(users: ["u\($0 % 10)"], parameters: ["\($0)"], sequence: $0) })
            let proxy = try await TCPProxy.start(targetHost: "127.0.0.1", targetPort: fixture.amqpConfiguration.port)
            var configuration = fixture.configuration(lanes: 4)
            configuration.amqp.port = proxy.port
            let sender = RecordingSender(delay: .milliseconds(5))
            try await fixture.withWorker(sender: sender, configuration: configuration) { worker in
                try await waitUntil("some deliveries", timeout: .seconds(20)) { sender.count >= 40 }
                await proxy.severAll()
                // Under load the worker may send everything it holds before it notices the cut;
                // settled means reconnected and the requeued rest acknowledged.
                try await waitUntil("the worker to reconnect", timeout: .seconds(60)) { worker.statistics.connections >= 2 }
                // The broker requeues what the cut connection held when it drops that consumer
                // (in the same step of the queue's process): until then, an empty queue says
                // nothing, and those messages would come back only after the worker stopped.
                try await waitUntil("the broker to drop the cut connection's consumer", timeout: .seconds(30)) {
                    (try? await fixture.amqp.queueState(fixture.topology.queue).consumerCount) == 1
                }
                try await waitUntil("every delivery", timeout: .seconds(60)) { Set(sender.sent.map(\.key)).count == 200 }
                try await fixture.waitUntilSettled(worker)
            }
            try await proxy.shutdown()
            #expect(try await fixture.depth(fixture.topology.queue) == 0)
        }
    }
}
