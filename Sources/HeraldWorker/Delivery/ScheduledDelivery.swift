import Foundation
import HeraldCore

/// One claimed delivery waiting in its user's lane: everything needed to build and send it.
struct ScheduledDelivery: Sendable {
    let key: DeliveryKey
    let recipient: Recipient
    let event: Event
    let rendered: RenderedNotification
    /// The device's notification position the journal gave the claim.
    let position: Int
    /// The journal had this delivery claimed before without an outcome (a crash): ask the
    /// sender whether it went out before sending again.
    let inDoubt: Bool
    /// Attempts the journal recorded before (for an in-doubt claim).
    let previousAttempts: Int
    /// When the producer published the message, if it said.
    let publishedAt: Date?
    let messageKey: String
}
