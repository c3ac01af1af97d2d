import Foundation
import HeraldCore
import HeraldStore

/// A decoded message whose recipients are selected and whose texts are rendered: what the
/// ``ClaimStage`` claims.
struct PlannedMessage: Sendable {
    let message: TrackedMessage
    let event: Event
    let metadata: EventMetadata
    let key: MessageKey
    /// `AvoidDublication` asked for, and the message is neither a redelivery nor a replayed
    /// dead letter (for those the journal, not the key, decides).
    let dropsRepeats: Bool
    let publishedAt: Date?
    /// The recipients, and the text rendered for each (same order).
    let recipients: [Recipient]
    let rendered: [RenderedNotification]
}
