import HeraldCore
import HeraldStore

/// The only way into the ``DeliveryEngine``: whoever has news (the claim stage, a sender's
/// completion on its own thread, a record write, a retry timer, a stop) posts an event; the
/// engine's task takes everything posted at once. A sender that answers inside `submit` (the
/// null sender) costs no wake-up at all.
typealias EngineMailbox = BatchingMailbox<EngineEvent>

/// What the engine is told (``EngineMailbox``).
enum EngineEvent: Sendable {
    /// Claimed deliveries, in order, to enqueue in their users' lanes.
    case fanOut([Delivery])
    /// A sender's answer for a submitted delivery, and how long the provider took to give it
    /// (``HeraldDelivery/PushSender/submit(_:timed:)``).
    case outcome(Delivery, DeliveryOutcome, answerTime: Duration?)
    /// What an in-doubt delivery turned out to be before it was sent again.
    case reconciled(Delivery, InDoubtAnswer)
    /// A record write ended: the deliveries it settled (their messages are acknowledged by the
    /// write's task when it is durable), and true if durable (false: given up, the worker is
    /// aborting).
    case recorded([Delivery], Bool)
    /// A backlog write ended (true: durable; false: given up, the worker is aborting).
    case backlogWritten([Delivery], Bool)
    /// A read of a user's backlog ended: its deliveries in order, and the last place read
    /// (nil: nothing was left; a failed read is `nil` deliveries).
    case backlogRead(OrderingKey, [Delivery]?, upTo: Int64?)
    /// This worker took a scope's backlog (``UserBacklogs/scope(of:)``): the users with
    /// queued deliveries, and their last places.
    case backlogAcquired(Int, [(user: OrderingKey, lastSeq: Int64)])
    /// This worker lost the backlog's lock.
    case backlogLost(Int)
    /// The lock was taken back and nobody held it meanwhile: the backlog goes on as it was.
    case backlogResumed(Int)
    /// The scope's partition is being handed over: nothing more is sent from its backlog.
    case backlogLeaving(Int)
    /// Another worker holds (or will hold) the scope: its backlog is forgotten here.
    case backlogGone(Int)
    /// Something to look at: a retry may be due, or the worker is stopping.
    case wake

    /// The answer about an in-doubt delivery.
    enum InDoubtAnswer: Sendable {
        /// The journal has it terminal now (another copy finished it): record nothing more.
        case recorded(DeliveryState)
        /// The sender knows it reached the provider: record it as sent, do not send again.
        case delivered
        /// Nobody knows: send it again with the same collapse id.
        case send
    }
}
