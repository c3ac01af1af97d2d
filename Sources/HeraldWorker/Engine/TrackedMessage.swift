import HeraldAMQP
import HeraldCore

/// A received AMQP message, from its arrival until it is acknowledged (or given up); or a window
/// of a broadcast sent in windows (``window``), which is settled the same way but reported to
/// its ``BroadcastWindow`` instead of acknowledged (its AMQP message was acknowledged when the
/// broadcast was written down).
///
/// Why `@unchecked Sendable` is safe: the `let`s are immutable; the `var`s are read and written
/// only under the ``MessageTracker``'s lock.
final class TrackedMessage: @unchecked Sendable {
    let delivery: AMQPDelivery
    /// The queue it was consumed from (its deferred copy returns there).
    let queue: String
    let connection: AMQPConnection
    /// The connection session it arrived on.
    let session: UInt64
    /// For a partition copy (`worker.partitions` > 0): the users it is for; nil otherwise.
    let slice: PartitionSlice?
    /// Its event, or why it does not decode, when the consumer task decoded it on arrival (off
    /// the intake's serial path: the planner then only looks it up); nil otherwise.
    let decoded: Result<Event, EventDecodingError>?
    /// A broadcast's window: settled, it tells its runner, never the broker.
    let window: BroadcastWindow?

    /// Where it is in its life. Attaching: its deliveries are being attached (fan-out); sealed:
    /// none will be any more, it waits for ``remaining``; settled: acknowledged (or about to
    /// be); forgotten: its connection was lost and the broker requeued it, so it is never
    /// acknowledged here. Only forward: settled and forgotten are final.
    enum Phase { case attaching, sealed, settled, forgotten }

    // Guarded by the MessageTracker's lock.
    var phase = Phase.attaching
    /// Deliveries it still waits for.
    var remaining = 0
    /// Some of its deliveries were deferred (their provider's circuit breaker was open): settled,
    /// it is republished to its queue's wait queue, to come back at this instant, before it is
    /// acknowledged. Read once settled (the lock's release orders it).
    var deferredUntil: ContinuousClock.Instant?

    init(
        delivery: AMQPDelivery, queue: String, connection: AMQPConnection, session: UInt64, slice: PartitionSlice? = nil, decoder: EventDecoder? = nil,
        window: BroadcastWindow? = nil
    ) {
        self.delivery = delivery
        self.queue = queue
        self.connection = connection
        self.session = session
        self.slice = slice
        self.decoded = decoder.map { EventAdmission.decode(delivery, decoder: $0) }
        self.window = window
    }
}
