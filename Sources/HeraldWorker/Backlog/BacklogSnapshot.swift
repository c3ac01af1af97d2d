import Foundation
import HeraldCore
import HeraldStore

/// What a queued delivery needs to be sent without its message, kept as JSON in its backlog row
/// (``HeraldStore/DeliveryBacklog``): the message was acknowledged when the row committed. The
/// payload is built when it is sent, as for any delivery.
struct BacklogSnapshot: Codable {
    var event: Event
    var metadata: EventMetadata
    var messageKey: String
    var partitionSuffix: String
    var journalId: Int64
    var publishedAt: Date?
    var recipient: Recipient
    var rendered: RenderedNotification
    var deviceRef: Int64
    var position: Int64
    var attempts: Int
    var badge: Int?
    /// Its message was known when it was claimed and nobody knows whether it went out: ask the
    /// sender before sending it.
    var inDoubt: Bool

    init(_ delivery: Delivery, attempts: Int, inDoubt: Bool) {
        self.inDoubt = inDoubt
        event = delivery.context.event
        metadata = delivery.context.metadata
        messageKey = delivery.context.key.text
        partitionSuffix = delivery.context.key.partitionSuffix
        journalId = delivery.context.journalId
        publishedAt = delivery.context.publishedAt
        recipient = delivery.recipient
        rendered = delivery.rendered
        deviceRef = delivery.deviceRef
        position = delivery.position
        self.attempts = attempts
        badge = delivery.badge
    }

    /// The delivery again, at `place`; its journal row is the `.queued` one. `headInDoubt`: the
    /// previous holder of the backlog may have sent it just before it went.
    func delivery(at place: BacklogPlace, headInDoubt: Bool) -> Delivery {
        let context = MessageContext(
            event: event, metadata: metadata, key: MessageKey(text: messageKey, partitionSuffix: partitionSuffix), journalId: journalId,
            publishedAt: publishedAt)
        let delivery = Delivery(
            context: context, recipient: recipient, rendered: rendered, deviceRef: deviceRef, position: position, inDoubt: inDoubt || headInDoubt,
            attempts: attempts, hasPendingRow: true, badge: badge)
        delivery.backlogPlace = place
        return delivery
    }
}
