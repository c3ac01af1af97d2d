import HeraldAMQP
import HeraldCore

/// The partition queues of a worker installation with `count` partitions (`worker.partitions`),
/// derived from its ``HeraldTopology``, and the rules that send an event to them.
///
/// Partition `p` is the queue `<queue>.p<p>`: durable, the main queue's type,
/// `x-single-active-consumer` (one worker process owns it at a time; another takes over when it
/// goes), dead-lettering into the main queue's dead-letter exchange with the main queue's routing
/// key (so every dead letter lands in `<queue>.dead`), and `x-herald-partitions = count`, so that
/// a worker configured with another count finds the queue "exists with other settings" and says
/// so. The ingest publishes copies through the default exchange (routing key = queue name).
///
/// A user belongs to partition `PartitionHash.partition(ofUser:count:)`. An event goes to the
/// partitions of its `UserId`s; a broadcast (`UserId 0`, or no `UserId`) to every partition,
/// each of which delivers it to the devices of its own users.
///
/// Every process of an installation must use the same count. A pure value; `Sendable`.
public struct PartitionLayout: Sendable, Hashable {
    /// Header on every partition copy: the partition it was published for.
    public static let partitionHeader = "x-herald-partition"
    /// Header on every partition copy: the partition count the ingest used.
    public static let countHeader = "x-herald-partitions"
    /// Queue argument carrying the partition count (informational; a mismatch shows as a
    /// topology warning).
    public static let countArgument = "x-herald-partitions"
    /// Most partitions a layout may have.
    public static let maximumCount = 1_024

    public let topology: HeraldTopology
    /// K, at least 1.
    public let count: Int

    public init(topology: HeraldTopology, count: Int) {
        precondition(count >= 1 && count <= Self.maximumCount, "1…\(Self.maximumCount) partitions")
        self.topology = topology
        self.count = count
    }

    /// `<queue>.p<partition>`.
    public func queueName(_ partition: Int) -> String { "\(topology.queue).p\(partition)" }

    /// Every partition queue's name, partition 0 first.
    public var queueNames: [String] { (0..<count).map(queueName) }

    /// `<queue>.ingest`: the ingest's lock, an exclusive (so classic, non-durable) queue that the
    /// holding process declares on its connection and that goes with it. Nothing is published
    /// to it.
    public var ingestLock: AMQPQueue { AMQPQueue(name: "\(topology.queue).ingest", durable: false, exclusive: true) }

    /// The queue declarations of every partition, partition 0 first.
    public var queues: [AMQPQueue] {
        (0..<count).map { partition in
            var arguments = topology.queueArguments
            arguments[Self.countArgument] = .int(Int64(count))
            return AMQPQueue(
                name: queueName(partition), type: topology.queueType, deadLetterExchange: topology.deadLetterExchange,
                deadLetterRoutingKey: topology.deadLetterRoutingKey, singleActiveConsumer: true, arguments: arguments
            )
        }
    }

    /// The partition of user `userId`.
    public func partition(ofUser userId: String) -> Int {
        PartitionHash.partition(ofUser: userId, count: count)
    }

    /// The partitions `event` must be copied to, ascending: every partition for a broadcast or an
    /// event without `UserId`, else those of its users.
    public func partitions(for event: Event) -> [Int] {
        let users = event.userIds
        if users.isEmpty || event.isBroadcast { return Array(0..<count) }
        return Set(users.map(partition(ofUser:))).sorted()
    }
}
