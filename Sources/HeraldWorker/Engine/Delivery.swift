import HeraldCore
import HeraldStore
import HeraldSupport

/// One delivery in flight in this process, from its claim until its outcome is recorded.
///
/// Ownership (why `@unchecked Sendable` is safe): the claim stage creates it and fills the
/// `let`s, then hands it to the ``DeliveryEngine`` once, through its mailbox (a lock: a
/// happens-before edge); from then on only the engine's task reads or writes the `var`s. The
/// sender sees a ``HeraldCore/PushDelivery`` copy, and completion callbacks only carry the
/// reference back through the mailbox. ``waiters`` is the exception: it is read and written
/// only under the ``MessageTracker``'s lock.
final class Delivery: @unchecked Sendable {
    let context: MessageContext
    let recipient: Recipient
    let rendered: RenderedNotification
    /// The device's store id and the position reserved for this delivery.
    let deviceRef: Int64
    let position: Int64
    /// Within this process: the same delivery of another copy of its message joins it.
    let joinKey: JoinKey
    /// The unread count for the app badge (``HeraldStore/ClaimAnswer/unread``); `nil` when not
    /// counted (badges off, or a delivery resumed from the journal): the payload has no badge
    /// and the device keeps the one it shows.
    let badge: Int?

    // Engine-owned.
    /// The journal had no outcome for it while its message was known (a crash, a lost
    /// connection): ask whether it went out before sending again.
    var inDoubt: Bool
    /// Attempts made, including those recorded before a restart.
    var attempts: Int
    /// The journal holds a `.pending` row for it (it was retried): its outcome completes the row.
    var hasPendingRow: Bool
    /// Its position was reserved by an earlier copy of its message (come again after a restart, a
    /// crash or a deferral): it is older than whatever its user queued since.
    var wasClaimedBefore: Bool { inDoubt || hasPendingRow }
    var ticket: Lanes.Ticket?
    var payload: PushPayload?
    var firstAttempt: ContinuousClock.Instant?
    /// When the current attempt was handed to the sender: the answer-time histogram, which
    /// includes the time it queued on the way (the circuit breaker judges by the provider's own
    /// time, ``ProviderGates/isSlow(answerTime:)``).
    var sentAt: ContinuousClock.Instant?
    var retryDue: ContinuousClock.Instant?
    /// Sent as its provider's half-open circuit breaker probe (``ProviderGates``).
    var isProbe = false
    /// Its place in its user's backlog, once queued there (``UserBacklogs``): from then on no
    /// message waits for it, and its terminal record removes the row.
    var backlogPlace: BacklogPlace?

    // Guarded by the MessageTracker's lock.
    var waiters: [TrackedMessage] = []

    init(
        context: MessageContext, recipient: Recipient, rendered: RenderedNotification, deviceRef: Int64, position: Int64,
        inDoubt: Bool, attempts: Int, hasPendingRow: Bool, badge: Int? = nil
    ) {
        self.badge = badge
        self.context = context
        self.recipient = recipient
        self.rendered = rendered
        self.deviceRef = deviceRef
        self.position = position
        self.joinKey = JoinKey(message: context.journalId, deviceRef: deviceRef, userId: recipient.addressedUserId)
        self.inDoubt = inDoubt
        self.attempts = attempts
        self.hasPendingRow = hasPendingRow
    }

    /// The collapse id: stable across redeliveries of the message.
    var key: DeliveryKey { recipient.deliveryKey(messageKey: context.key.text) }
}

/// A delivery's identity within one worker process: its message's journal row, its device, the
/// addressed user. Hashed once, when it is made (``HeraldSupport/Prehashed``): the tracker
/// looks a delivery's key up twice.
struct JoinKey: Hashable, Sendable {
    private struct Fields: Hashable, Sendable {
        let message: Int64
        let deviceRef: Int64
        let userId: String
    }

    private let key: Prehashed<Fields>

    init(message: Int64, deviceRef: Int64, userId: String) {
        key = Prehashed(Fields(message: message, deviceRef: deviceRef, userId: userId))
    }
}

/// The engine's per-user lanes: keyed by user and platform (``HeraldCore/Recipient/orderingKey``).
typealias Lanes = PerUserScheduler<OrderingKey, Delivery>
