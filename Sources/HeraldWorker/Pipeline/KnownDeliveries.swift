import HeraldCore
import HeraldStore

/// What becomes of each delivery of the chunk's known messages (or of a broadcast's window that
/// may have been under way before).
struct KnownDeliveries {
    struct Entry {
        enum Kind {
            /// Terminal in the journal, or queued in its user's backlog.
            case skip
            /// In flight in this process (pinned).
            case join(JoinKey)
            /// Retrying or deferred in the journal: resend at its position.
            case resend(position: Int64, attempts: Int, inDoubt: Bool)
            /// Never recorded: resend at the position reserved in slot `n` of ``needingPositions``.
            case reserved(Int)
        }
        let offset: Int
        let kind: Kind
    }

    var entries: [Int: [Entry]] = [:]
    var needingPositions: [(deviceRef: Int64, index: Int)] = []

    mutating func plan(_ planned: PlannedMessage, index: Int, history: MessageHistory, tracker: MessageTracker) {
        var recorded: [RecordedKey: MessageHistory.Recorded] = [:]
        for delivery in history.deliveries { recorded[RecordedKey(deviceRef: delivery.deviceRef, userId: delivery.userId)] = delivery }
        var list: [Entry] = []
        for (offset, recipient) in planned.recipients.enumerated() {
            guard let deviceRef = recipient.subscription.deviceRef else { continue }
            let found = recorded[RecordedKey(deviceRef: deviceRef, userId: recipient.addressedUserId)]
            // Terminal, or waiting in its user's backlog, which sends it: nothing to do here.
            if let found, found.state.isTerminal || found.state == .queued {
                list.append(Entry(offset: offset, kind: .skip))
                continue
            }
            let key = JoinKey(message: history.id, deviceRef: deviceRef, userId: recipient.addressedUserId)
            if tracker.pinIfInFlight(key) {
                list.append(Entry(offset: offset, kind: .join(key)))
            } else if let found {
                list.append(Entry(offset: offset, kind: .resend(position: found.position, attempts: found.attempts, inDoubt: found.state != .deferred)))
            } else {
                list.append(Entry(offset: offset, kind: .reserved(needingPositions.count)))
                needingPositions.append((deviceRef, index))
            }
        }
        entries[index] = list
    }

    /// The attachments of message `index` (``plan(_:index:history:tracker:)``), with the
    /// positions `reserved` for ``needingPositions``, and how many of its deliveries start
    /// nothing here (done, queued, joined, or their device gone). `make(offset, position,
    /// attempts, hasPendingRow, inDoubt)` makes a delivery to start.
    func attachments(
        of index: Int, reserved: [Int64?], make: (Int, Int64, Int, Bool, Bool) -> Delivery
    ) -> (attachments: [MessageTracker.Attachment], skipped: Int) {
        var attachments: [MessageTracker.Attachment] = []
        var skipped = 0
        for entry in entries[index] ?? [] {
            switch entry.kind {
            case .skip:
                skipped += 1
            case .join(let key):
                skipped += 1  // in flight here for another copy
                attachments.append(.join(key))
            case .resend(let position, let attempts, let inDoubt):
                attachments.append(.start(make(entry.offset, position, attempts, true, inDoubt)))
            case .reserved(let slot):
                guard let position = reserved[slot] else {
                    skipped += 1
                    continue
                }
                attachments.append(.start(make(entry.offset, position, 0, false, true)))
            }
        }
        return (attachments, skipped)
    }

    private struct RecordedKey: Hashable {
        let deviceRef: Int64
        let userId: String
    }
}
