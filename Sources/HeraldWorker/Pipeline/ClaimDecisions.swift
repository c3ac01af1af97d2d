import Foundation
import HeraldCore
import HeraldStore

/// The claim stage's decisions about one chunk, with no I/O: which messages are later copies of
/// one in the same chunk, which the journal knew, what becomes of those known messages'
/// deliveries (``KnownDeliveries``), which are `AvoidDublication` repeats to drop, and each
/// message's fan-out. The ``ClaimStage`` reads the journal between the steps (the histories,
/// then the positions to reserve) and carries the result out.
struct ClaimDecisions {
    let chunk: [PlannedMessage]
    let answer: ClaimAnswer
    /// Later copies of a message in the same chunk → the first copy's journal id. (Only a
    /// message the claim gave no row can be one: in the common case every message has one.)
    private(set) var repeatedInChunk: [Int: Int64] = [:]
    /// The messages the journal knew: their histories are needed (``resume(_:now:duplicateWindow:tracker:)``).
    private(set) var known: [Int] = []
    private(set) var resumed = KnownDeliveries()
    /// Known messages whose journal row is gone (expired since the claim): left for redelivery.
    private(set) var missing: [Int] = []
    /// The histories of the known messages whose deliveries were planned (not the repeats').
    private var histories: [UUID: MessageHistory] = [:]
    /// Known messages dropped as repeats (``resume(_:now:duplicateWindow:tracker:)``): settled
    /// at once, before the positions are reserved.
    private(set) var knownRepeats: [Repeat] = []

    /// A message dropped as an `AvoidDublication` repeat (its chunk index) of journal message
    /// `journalId`.
    struct Repeat {
        let index: Int
        let journalId: Int64
    }

    /// Everything the claim starts or settles.
    struct FanOut {
        /// Each message and its deliveries (started, or joined), in arrival order.
        var attachments: [(TrackedMessage, [MessageTracker.Attachment])] = []
        /// Deliveries that start nothing here (done, queued, joined, or their device gone).
        var skipped = 0
        /// Later copies in the chunk dropped as repeats.
        var repeats: [Repeat] = []
    }

    init(chunk: [PlannedMessage], answer: ClaimAnswer) {
        self.chunk = chunk
        self.answer = answer
        if answer.messageIds.contains(nil) {
            var firstCopy = [UUID: Int64](minimumCapacity: chunk.count)
            for (index, planned) in chunk.enumerated() {
                if let id = answer.messageIds[index] {
                    firstCopy[planned.key.digest] = id
                } else if let id = firstCopy[planned.key.digest] {
                    repeatedInChunk[index] = id
                }
            }
        }
        known = chunk.indices.filter { answer.messageIds[$0] == nil && repeatedInChunk[$0] == nil }
    }

    /// What becomes of the known messages, given their `histories` (by key digest): a repeat
    /// within the duplicate window is dropped; otherwise each delivery is planned
    /// (``KnownDeliveries/plan(_:index:history:tracker:)``, which pins those in flight here).
    mutating func resume(_ histories: [UUID: MessageHistory], now: Date, duplicateWindow: Duration, tracker: MessageTracker) {
        for index in known {
            let planned = chunk[index]
            guard let history = histories[planned.key.digest] else {
                missing.append(index)
                continue
            }
            if planned.dropsRepeats, now.timeIntervalSince(history.receivedAt) < duplicateWindow.seconds {
                knownRepeats.append(Repeat(index: index, journalId: history.id))
                continue
            }
            self.histories[planned.key.digest] = history
            resumed.plan(planned, index: index, history: history, tracker: tracker)
        }
    }

    /// The fan-out, in arrival order, with the positions `reserved` for
    /// ``KnownDeliveries/needingPositions``.
    func fanOut(reserved: [Int64?]) -> FanOut {
        var result = FanOut()
        result.attachments.reserveCapacity(chunk.count)
        var next = 0  // index into the claim's deliveries
        for (index, planned) in chunk.enumerated() {
            defer { next += planned.recipients.count }
            if let id = answer.messageIds[index] {
                let context = MessageContext(
                    event: planned.event, metadata: planned.metadata, key: planned.key, journalId: id, publishedAt: planned.publishedAt)
                var attachments: [MessageTracker.Attachment] = []
                attachments.reserveCapacity(planned.recipients.count)
                for (offset, recipient) in planned.recipients.enumerated() {
                    guard let position = answer.positions[next + offset], recipient.subscription.deviceRef != nil else {
                        result.skipped += 1  // the device is gone
                        continue
                    }
                    let badge = answer.unread.isEmpty ? nil : answer.unread[next + offset]
                    attachments.append(
                        .start(planned.delivery(context, offset: offset, position: position, attempts: 0, hasPendingRow: false, inDoubt: false, badge: badge)))
                }
                result.attachments.append((planned.message, attachments))
            } else if let id = repeatedInChunk[index] {
                if planned.dropsRepeats {
                    result.repeats.append(Repeat(index: index, journalId: id))
                    continue
                }
                let joins = planned.recipients.compactMap { recipient in
                    recipient.subscription.deviceRef.map {
                        MessageTracker.Attachment.join(JoinKey(message: id, deviceRef: $0, userId: recipient.addressedUserId))
                    }
                }
                result.skipped += joins.count
                result.attachments.append((planned.message, joins))
            } else if let history = histories[planned.key.digest] {
                let context = MessageContext(
                    event: planned.event, metadata: planned.metadata, key: planned.key, journalId: history.id, publishedAt: planned.publishedAt)
                let (attachments, notStarted) = resumed.attachments(of: index, reserved: reserved) { offset, position, attempts, hasPendingRow, inDoubt in
                    planned.delivery(context, offset: offset, position: position, attempts: attempts, hasPendingRow: hasPendingRow, inDoubt: inDoubt)
                }
                result.skipped += notStarted
                result.attachments.append((planned.message, attachments))
            }
        }
        return result
    }
}
