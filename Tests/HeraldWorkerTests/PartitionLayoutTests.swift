import Foundation
import HeraldAMQP
import HeraldCore
import HeraldWorker
import Testing

/// The partition hash is pinned (it must never change: every process of every version must send
/// a user to the same partition), and the layout's queues and event routing.
@Suite("Partition layout")
struct PartitionLayoutTests {
    @Test func fnv1a64IsPinned() {
        // The FNV-1a reference values, and user ids of the seed and the tests.
        #expect(PartitionHash.fnv1a64("") == 0xcbf2_9ce4_8422_2325)
        #expect(PartitionHash.fnv1a64("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(PartitionHash.fnv1a64("foobar") == 0x8594_4171_f739_67e8)
        #expect(PartitionHash.fnv1a64("119973638970") == 0x6dbd_8179_c427_f5a8)
        #expect(PartitionHash.fnv1a64("пользователь") == 0x4175_47f7_9db9_4a37)
    }

    @Test func partitionsAreTheHashModuloTheCount() {
        #expect(["u1", "u2", "u3", "u42", "119973638970"].map { PartitionHash.partition(ofUser: $0, count: 4) } == [3, 2, 1, 2, 0])
        #expect(["u1", "u2", "u3", "u42", "119973638970"].map { PartitionHash.partition(ofUser: $0, count: 16) } == [3, 6, 9, 10, 8])
        #expect(PartitionHash.partition(ofUser: "anyone", count: 1) == 0)
    }

    @Test func partitionQueuesAreSingleActiveConsumerAndDeadLetterLikeTheMainQueue() {
        let topology = HeraldTopology(queue: "w1.pushnotification", queueType: .quorum, queueArguments: ["x-delivery-limit": 20])
        let layout = PartitionLayout(topology: topology, count: 3)
        #expect(layout.queueNames == ["w1.pushnotification.p0", "w1.pushnotification.p1", "w1.pushnotification.p2"])
        let queue = layout.queues[1]
        #expect(queue.name == "w1.pushnotification.p1")
        #expect(queue.durable)
        #expect(queue.singleActiveConsumer)
        let arguments = queue.declarationArguments
        #expect(arguments["x-single-active-consumer"] == .bool(true))
        #expect(arguments["x-queue-type"] == .string("quorum"))
        #expect(arguments["x-dead-letter-exchange"] == .string("w1.pushnotification.dlx"))
        #expect(arguments["x-dead-letter-routing-key"] == .string("w1.pushnotification"))
        #expect(arguments["x-delivery-limit"] == .int(20))
        #expect(arguments["x-herald-partitions"] == .int(3))
    }

    @Test func anEventGoesToItsUsersPartitionsAndABroadcastToAll() throws {
        let layout = PartitionLayout(topology: HeraldTopology(), count: 4)
        let decoder = EventDecoder()
        func event(_ users: [String], type: String = "Message") throws -> Event {
            try decoder.decode(TestEvents.xml(users: users, sequence: 1, type: type), contentType: "application/xml").event
        }
        #expect(layout.partitions(for: try event(["u1"])) == [3])
        #expect(layout.partitions(for: try event(["u1", "u2", "u42", "u3"])) == [1, 2, 3])
        #expect(layout.partitions(for: try event(["0"], type: "News")) == [0, 1, 2, 3])
        #expect(layout.partitions(for: try event([], type: "News")) == [0, 1, 2, 3])
        #expect(layout.partitions(for: try event(["u1", "0"])) == [0, 1, 2, 3])
    }

    @Test func partitionsAreValidated() {
        var configuration = WorkerConfiguration(amqp: AMQPConfiguration())
        configuration.partitions = -1
        #expect(throws: WorkerError.self) { try configuration.validate() }
        configuration.partitions = PartitionLayout.maximumCount + 1
        #expect(throws: WorkerError.self) { try configuration.validate() }
        configuration.partitions = 0
        #expect(configuration.partitionLayout == nil)
        configuration.partitions = 4
        #expect(configuration.partitionLayout?.count == 4)
    }
}
