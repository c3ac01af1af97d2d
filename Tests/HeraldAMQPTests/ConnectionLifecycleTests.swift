import Foundation
import HeraldTesting
import Testing

@testable import HeraldAMQP

@Suite("Connection lifecycle", .requires(.rabbitMQ))
struct ConnectionLifecycleTests {
    /// Dropping the last reference closes the connection and ends its thread: the thread is the
    /// last holder of the shared core, so the core going away proves the thread has exited.
    @Test(.timeLimit(.minutes(1)))
    func droppingTheLastReferenceEndsTheThread() async throws {
        weak var core: ConnectionCore?
        do {
            let connection = try await AMQPTestSupport.connect(name: "deinit-test")
            core = connection.core
            // A server-named exclusive queue: it goes away with the connection.
            let queue = try await connection.declareQueue(AMQPQueue(name: "", durable: false, exclusive: true, autoDelete: true))
            #expect(queue.name.hasPrefix("amq.gen-"))
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while core != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(core == nil)
    }
}
