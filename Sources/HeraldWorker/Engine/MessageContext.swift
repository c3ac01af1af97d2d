import Foundation
import HeraldCore
import HeraldStore

/// What every delivery of one message shares, made once per message: the event, its journal
/// row, and the texts rendered per (culture, platform). Immutable.
final class MessageContext: Sendable {
    let event: Event
    let metadata: EventMetadata
    let key: MessageKey
    /// The message's journal row (``HeraldStore/ClaimAnswer/messageIds``).
    let journalId: Int64
    /// When the producer published the message, if it said.
    let publishedAt: Date?

    init(event: Event, metadata: EventMetadata, key: MessageKey, journalId: Int64, publishedAt: Date?) {
        self.event = event
        self.metadata = metadata
        self.key = key
        self.journalId = journalId
        self.publishedAt = publishedAt
    }
}
