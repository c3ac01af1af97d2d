import HeraldAMQP

/// The part of an event's audience one partition copy stands for: the users whose
/// ``PartitionHash`` modulo ``count`` is ``partition``.
///
/// Read from the copy's own headers (`x-herald-partition`, `x-herald-partitions`, set by the
/// ingest) so that every recipient is delivered by exactly one copy even while workers disagree
/// about the count (a configuration change rolling out); a copy without them (published by hand
/// into a partition queue) stands for the partition of the queue it came from.
struct PartitionSlice: Sendable, Hashable {
    let partition: Int
    let count: Int

    /// The slice of a copy received from partition queue `queuePartition` of `layout`.
    static func of(_ delivery: AMQPDelivery, queuePartition: Int, layout: PartitionLayout) -> PartitionSlice {
        let headers = delivery.properties.headers
        if let partition = headers[PartitionLayout.partitionHeader]?.intValue, let count = headers[PartitionLayout.countHeader]?.intValue,
            count >= 1, count <= Int64(PartitionLayout.maximumCount), partition >= 0, partition < count
        {
            return PartitionSlice(partition: Int(partition), count: Int(count))
        }
        return PartitionSlice(partition: queuePartition, count: layout.count)
    }

    func contains(user userId: String) -> Bool {
        PartitionHash.partition(ofUser: userId, count: count) == partition
    }

    /// What tells a copy's journal row (and `AvoidDublication` key) from the other copies of
    /// its message: `"#p<p>/<K>"` after the message key, or the second copy would look like a
    /// repeat of the first.
    var journalSuffix: String { "#p\(partition)/\(count)" }
}
