import HeraldAMQP

/// A received AMQP message, from its arrival until it is acknowledged (or given up).
///
/// Why `@unchecked Sendable` is safe: the `let`s are immutable; the `var`s are read and written
/// only under the ``MessageTracker``'s lock.
final class TrackedMessage: @unchecked Sendable {
    let delivery: AMQPDelivery
    let connection: AMQPConnection
    /// The connection session it arrived on.
    let session: UInt64
    /// For a partition copy (`worker.partitions` > 0): the users it is for; nil otherwise.
    let slice: PartitionSlice?

    // Guarded by the MessageTracker's lock.
    /// Deliveries it still waits for.
    var remaining = 0
    /// Fan-out is done: no delivery will be attached any more.
    var sealed = false
    /// Its connection was lost: the broker requeued it; never acknowledge it here.
    var forgotten = false
    var settled = false

    init(delivery: AMQPDelivery, connection: AMQPConnection, session: UInt64, slice: PartitionSlice? = nil) {
        self.delivery = delivery
        self.connection = connection
        self.session = session
        self.slice = slice
    }
}
