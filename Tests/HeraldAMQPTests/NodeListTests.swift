import Foundation
import HeraldAMQP
import HeraldTesting
import Testing

/// A URL may name every node of a RabbitMQ cluster; a connection tries them in turn.
@Suite("Cluster node list")
struct NodeListTests {
    @Test func parsesEveryNodeWithItsPortOrTheDefault() throws {
        let configuration = try AMQPConfiguration(url: "amqp://u:p@h1:5673,h2,[::1]:5674/vhost")
        #expect(configuration.nodes == [AMQPNode(host: "h1", port: 5673), AMQPNode(host: "h2", port: 5672), AMQPNode(host: "::1", port: 5674)])
        #expect(configuration.virtualHost == "vhost" && configuration.user == "u")
        #expect(configuration.redactedURL == "amqp://u@h1:5673,h2:5672,[::1]:5674/vhost")
        #expect(try AMQPConfiguration(url: "amqps://h1,h2").nodes.map(\.port) == [5671, 5671])
        #expect(try AMQPConfiguration(url: "amqp://h1").otherNodes.isEmpty)
        for bad in ["amqp://h1,,h2/", "amqp://h1,/", "amqp://h1,h2:0/", "amqp://h1,h2:/"] {
            #expect(throws: AMQPError.self, "\(bad)") { try AMQPConfiguration(url: bad) }
        }
    }

    @Test(.requires(.rabbitMQ), .timeLimit(.minutes(1)))
    func connectsToTheNextNodeWhenTheFirstIsDown() async throws {
        let broker = try AMQPTestSupport.brokerAddress()
        var configuration = try AMQPTestSupport.configuration()
        // Nothing listens on port 1: the first node refuses at once.
        configuration.host = "127.0.0.1"
        configuration.port = 1
        configuration.otherNodes = [AMQPNode(host: broker.host, port: broker.port)]
        let connection = try await AMQPConnection.connect(configuration)
        let queue = AMQPTestSupport.uniqueQueue("node-list")
        _ = try await connection.declareQueue(AMQPQueue(name: queue, durable: false, autoDelete: true))
        #expect(try await connection.queueState(queue).messageCount == 0)
        _ = try? await connection.deleteQueue(queue)
        await connection.close()

        // Every node down: the error names each one tried.
        var down = configuration
        down.otherNodes = [AMQPNode(host: "127.0.0.1", port: 2)]
        let error = await #expect(throws: AMQPError.self) { try await AMQPConnection.connect(down) }
        #expect(error?.code == .connectionFailed)
        #expect(error.map { "\($0)" }?.contains("127.0.0.1:1, 127.0.0.1:2") == true, "\(String(describing: error))")
    }
}
