import Foundation
import HeraldCore
import HeraldStore

/// A decoded message whose recipients are selected and whose texts are rendered: what the
/// ``ClaimStage`` claims. A class: it is passed along and iterated, never changed.
final class PlannedMessage: Sendable {
    let message: TrackedMessage
    let event: Event
    let metadata: EventMetadata
    let key: MessageKey
    /// `AvoidDublication` asked for, and the message is neither a redelivery, nor a replayed
    /// dead letter, nor a copy back from the wait queue (for those the journal, not the key,
    /// decides).
    let dropsRepeats: Bool
    /// A redelivery, a replayed dead letter or a copy back from the wait queue: the journal may
    /// know it (``HeraldStore/ClaimBatch/mayHoldKnown``).
    let mayBeKnown: Bool
    let publishedAt: Date?
    /// The recipients, and the text rendered for each (same order).
    let recipients: [Recipient]
    let rendered: [RenderedNotification]

    init(
        message: TrackedMessage, event: Event, metadata: EventMetadata, key: MessageKey, dropsRepeats: Bool, mayBeKnown: Bool,
        publishedAt: Date?, recipients: [Recipient], rendered: [RenderedNotification]
    ) {
        self.mayBeKnown = mayBeKnown
        self.message = message
        self.event = event
        self.metadata = metadata
        self.key = key
        self.dropsRepeats = dropsRepeats
        self.publishedAt = publishedAt
        self.recipients = recipients
        self.rendered = rendered
    }
}

extension PlannedMessage {
    /// The delivery to recipient `offset` of this message (journal row `context`), at `position`.
    func delivery(
        _ context: MessageContext, offset: Int, position: Int64, attempts: Int, hasPendingRow: Bool, inDoubt: Bool, badge: Int? = nil
    ) -> Delivery {
        Delivery(
            context: context, recipient: recipients[offset], rendered: rendered[offset], deviceRef: recipients[offset].subscription.deviceRef ?? -1,
            position: position, inDoubt: inDoubt, attempts: attempts, hasPendingRow: hasPendingRow, badge: badge
        )
    }
}
