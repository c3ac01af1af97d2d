/// One open AMQP channel as the connection thread sees it.
///
/// Every channel opening gets a fresh `session` number, unique for the connection's life, and
/// deliveries remember it: a settlement for a session that is gone is dropped instead of reaching
/// a later channel that happens to reuse the number.
///
/// Thread rule: owned by the connection thread.
final class ChannelState {
    enum Role {
        /// Synchronous operations: declarations, passive declares, purge, delete, `basic.get`.
        case control
        /// Publishing in confirm mode.
        case publisher
        /// One consumer per channel, so `basic.qos` and delivery tags are per consumer.
        case consumer(ConsumerRecord)
        /// Just opened, role not assigned yet.
        case opening
    }

    let number: UInt16
    let session: UInt64
    var role: Role
    /// Deliveries not yet settled on this channel.
    var ledger = DeliveryLedger()
    /// Acks gathered during this turn of the thread, coalesced when flushed.
    var pendingAcks: [UInt64] = []
    /// Acks of deliveries settled ahead of an older one still outstanding, held back for a few
    /// milliseconds so that the `basic.ack(multiple: true)` covering the older one covers them
    /// too (``ConnectionDriver/ackHoldTime``); since when the oldest of them waits.
    var heldAcks: Set<UInt64> = []
    var heldSince: ContinuousClock.Instant?
    /// The exchange and routing key of the last delivery, reused by the next one that names
    /// the same (``FieldTableCodec/string(_:reusing:)``).
    var lastExchange: String?
    var lastRoutingKey: String?
    /// Set once the channel is closed (by either side); the object may still be referenced.
    var isClosed = false

    init(number: UInt16, session: UInt64, role: Role) {
        self.number = number
        self.session = session
        self.role = role
    }

    var consumer: ConsumerRecord? {
        if case .consumer(let record) = role { return record }
        return nil
    }
}
