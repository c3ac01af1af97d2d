import HeraldCore

/// What one turn of the ``EngineCore`` decided that leaves it: sends, journal and backlog
/// writes, backlog reads, lookups, the messages' bookkeeping and acknowledgements, the next
/// wake-up. The ``DeliveryEngine`` carries them out after the turn; the core does none of it, so
/// its rules can be run and checked in process with no sender, broker or database.
struct EngineActions {
    /// One submit to the sender: the deliveries and their pushes, in the same order.
    var sends: [Delivery] = []
    var pushes: [PushDelivery] = []
    /// In-doubt deliveries to look up (the journal, then the sender) before they are sent again;
    /// the answers come back as ``EngineEvent/reconciled(_:_:)``.
    var reconcile: [Delivery] = []
    /// The messages' bookkeeping (``MessageTracker``), in the order it was decided.
    var settlements: [Settlement] = []
    /// Journal writes to start, one statement each; each answers ``EngineEvent/recorded(_:_:)``
    /// and acknowledges the messages it settled once durable.
    var recordWrites: [RecordBatch] = []
    /// Deliveries queued in their users' backlog (their ``Delivery/backlogPlace`` set), written
    /// as one statement; answers ``EngineEvent/backlogWritten(_:_:)``.
    var backlogWrite: [Delivery] = []
    /// Backlog windows to read, one query per element; each read answers
    /// ``EngineEvent/backlogRead(_:_:upTo:)``.
    var backlogReads: [[UserBacklogs.Read]] = []
    /// Scopes being left whose backlog has nothing in the lanes here any more.
    var leftScopes: [Int] = []
    /// Deliveries entered the lanes: the in-flight gauges are out of date.
    var fannedOut = false
    /// Wake the loop at this instant (a retry, or lingering records, are due), replacing the
    /// wake-up set before; nil: the one set before stands.
    var wakeAt: ContinuousClock.Instant?
    /// Lanes were freed while sending: take another turn without waiting for news.
    var turnAgain = false

    /// One step of the messages' bookkeeping.
    enum Settlement {
        /// Terminal and durable (or finished with nothing to record): their messages may be
        /// acknowledged.
        case finish([Delivery])
        /// They will not finish here (stopping, orphaned, a write given up): their messages are
        /// not acknowledged and come again.
        case drop([Delivery])
        /// Deferred until the instant (their provider is failing): their messages go to the wait
        /// queue when settled.
        case deferred([Delivery], until: ContinuousClock.Instant)
    }
}
