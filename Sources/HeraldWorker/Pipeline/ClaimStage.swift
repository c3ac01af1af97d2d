import Foundation
import HeraldCore
import HeraldStore
import Logging

/// Claims a planned chunk in the journal and hands its deliveries to the ``DeliveryEngine``, in
/// arrival order.
///
/// 1. One ``HeraldStore/DeliveryJournal/claim(_:)`` for the chunk: new messages get their rows
///    and their deliveries' device positions (the common case: nothing else to read or write).
/// 2. Known messages (redelivered, replayed, published twice, copied twice): one
///    ``HeraldStore/DeliveryJournal/history(of:)``. An `AvoidDublication` message first seen
///    within the duplicate window is a repeat: acknowledged without delivery. Otherwise each
///    delivery the journal has terminal is skipped; one still in flight in this process is
///    joined; one queued in its user's backlog is left to it; one recorded as retrying is sent
///    again at its position, with its attempts (in
///    doubt: an attempt after the row may have reached the provider); one recorded as deferred
///    (its provider's circuit breaker was open) is sent at its position, not in doubt (no attempt
///    followed the row); the rest were never recorded (perhaps sent just before a crash): they are sent again with the
///    same collapse id, in doubt, at positions reserved now.
/// 3. Fan-out: each message is attached to its deliveries and sealed (``MessageTracker``);
///    messages with nothing left are acknowledged; the new deliveries go to the engine.
///
/// Claims go through one ``HeraldStore/ClaimQueue``: ``submit(_:)`` sends a chunk's claim the
/// moment it is planned, behind the previous chunk's, and ``process(_:claim:)`` (called for one
/// chunk after the other, in order) takes its answer; so positions follow the order in which
/// messages arrived, which is each user's order. A store call that fails is retried with
/// backoff; when the worker stops meanwhile, the chunk is left unsettled (requeued).
struct ClaimStage: Sendable {
    let journal: DeliveryJournal
    let queue: ClaimQueue
    let tracker: MessageTracker
    let engine: DeliveryEngine
    let acknowledger: Acknowledger
    let metrics: WorkerMetrics
    let retry: StoreRetry
    let logger: Logger
    /// Ask the claim for each delivery's unread count (the app badge, when the payloads carry
    /// it): read in the claim statement itself, no extra round trip.
    var countsUnread = false

    /// Sends the claim of a planned chunk (nil for an empty one); its answer is taken by
    /// ``process(_:claim:)``.
    func submit(_ chunk: [PlannedMessage]) -> PendingClaim? {
        guard !chunk.isEmpty else { return nil }
        var batch = ClaimBatch(countsUnread: countsUnread, mayHoldKnown: chunk.contains { $0.mayBeKnown })
        batch.messages.reserveCapacity(chunk.count)
        batch.eventIds.reserveCapacity(chunk.count)
        for (index, planned) in chunk.enumerated() {
            batch.messages.append(planned.key)
            batch.eventIds.append(planned.event.id)
            for recipient in planned.recipients {
                batch.deliveries.append(
                    ClaimBatch.Delivery(message: index, deviceRef: recipient.subscription.deviceRef ?? -1, userId: recipient.addressedUserId))
            }
        }
        return queue.submit(batch)
    }

    /// Takes the chunk's claim answer and fans its deliveries out; then lets the next claim go.
    func process(_ chunk: [PlannedMessage], claim: PendingClaim?) async {
        guard let claim else { return }
        defer { queue.pass(claim) }
        guard let answer = await retry.run("DeliveryJournal.claim", { () async throws(StoreError) in try await claim.answer() }) else { return }

        // A message twice in the chunk: the later copies join the first one's deliveries. (Only
        // a message the claim gave no row can be one: in the common case every message has one.)
        var repeatedInChunk: [Int: Int64] = [:]
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
        // Known messages: what the journal has of them.
        let known = chunk.indices.filter { answer.messageIds[$0] == nil && repeatedInChunk[$0] == nil }
        var histories: [UUID: MessageHistory] = [:]
        if !known.isEmpty {
            guard
                let loaded = await retry.run(
                    "DeliveryJournal.history",
                    { () async throws(StoreError) in
                        try await journal.history(of: known.map { chunk[$0].key })
                    })
            else { return }
            for history in loaded { histories[history.key.digest] = history }
        }
        var resumed = KnownDeliveries()
        var repeatsOf: [Int64] = []  // journal ids of the messages whose repeats were dropped
        let now = Date()
        for index in known {
            let planned = chunk[index]
            guard let history = histories[planned.key.digest] else {
                // Expired between the claim and now: it comes again and is claimed as new.
                logger.warning("A known message's journal row is gone; leaving it for redelivery", metadata: [LogKey.messageKey: "\(planned.key)"])
                continue
            }
            if planned.dropsRepeats, now.timeIntervalSince(history.receivedAt) < journal.duplicateWindow.seconds {
                dropRepeat(planned)
                repeatsOf.append(history.id)
                resumed.repeats.insert(index)
                continue
            }
            resumed.plan(planned, index: index, history: history, tracker: tracker)
        }
        var reserved: [Int64?] = []
        if !resumed.needingPositions.isEmpty {
            guard
                let positions = await retry.run(
                    "DeliveryJournal.reservePositions",
                    { () async throws(StoreError) in
                        try await journal.reservePositions(resumed.needingPositions.map(\.deviceRef))
                    })
            else { return }
            reserved = positions
        }

        // Fan-out, in arrival order.
        var fanOut: [(TrackedMessage, [MessageTracker.Attachment])] = []
        fanOut.reserveCapacity(chunk.count)
        var next = 0  // index into the claim's deliveries
        var skipped = 0
        for (index, planned) in chunk.enumerated() {
            defer { next += planned.recipients.count }
            if let id = answer.messageIds[index] {
                let context = MessageContext(
                    event: planned.event, metadata: planned.metadata, key: planned.key, journalId: id, publishedAt: planned.publishedAt)
                var attachments: [MessageTracker.Attachment] = []
                attachments.reserveCapacity(planned.recipients.count)
                for (offset, recipient) in planned.recipients.enumerated() {
                    guard let position = answer.positions[next + offset], recipient.subscription.deviceRef != nil else {
                        skipped += 1  // the device is gone
                        continue
                    }
                    let badge = answer.unread.isEmpty ? nil : answer.unread[next + offset]
                    attachments.append(.start(delivery(context, planned, offset, position, 0, hasPendingRow: false, inDoubt: false, badge: badge)))
                }
                fanOut.append((planned.message, attachments))
            } else if let id = repeatedInChunk[index] {
                if planned.dropsRepeats {
                    dropRepeat(planned)
                    repeatsOf.append(id)
                    continue
                }
                let joins = planned.recipients.compactMap { recipient in
                    recipient.subscription.deviceRef.map {
                        MessageTracker.Attachment.join(JoinKey(message: id, deviceRef: $0, userId: recipient.addressedUserId))
                    }
                }
                skipped += joins.count
                fanOut.append((planned.message, joins))
            } else if let history = histories[planned.key.digest], !resumed.repeats.contains(index) {
                let context = MessageContext(
                    event: planned.event, metadata: planned.metadata, key: planned.key, journalId: history.id, publishedAt: planned.publishedAt)
                let (attachments, notStarted) = resumed.attachments(of: index, reserved: reserved) { offset, position, attempts, hasPendingRow, inDoubt in
                    delivery(context, planned, offset, position, attempts, hasPendingRow: hasPendingRow, inDoubt: inDoubt)
                }
                skipped += notStarted
                fanOut.append((planned.message, attachments))
            }
        }
        if skipped > 0 { metrics.skipped(skipped) }
        let (started, settled) = tracker.fanOut(fanOut)
        acknowledger.ack(settled)
        engine.enqueue(started)
        if !repeatsOf.isEmpty {
            // For support lookups only, after the acknowledgements: not retried, and a failure
            // costs nothing but the note.
            do {
                try await journal.noteRepeats(repeatsOf)
            } catch {
                logger.warning("Could not note dropped repeats for support lookups", metadata: [LogKey.error: "\(error)"])
            }
        }
    }

    /// An `AvoidDublication` repeat: acknowledged without delivery.
    private func dropRepeat(_ planned: PlannedMessage) {
        metrics.duplicate()
        logger.info("Repeated message dropped (AvoidDublication)", metadata: [LogKey.messageKey: "\(planned.key.text)", LogKey.eventId: "\(planned.event.id)"])
        if tracker.settle(planned.message) { acknowledger.ack(planned.message) }
    }

    func delivery(
        _ context: MessageContext, _ planned: PlannedMessage, _ offset: Int, _ position: Int64, _ attempts: Int, hasPendingRow: Bool, inDoubt: Bool,
        badge: Int? = nil
    ) -> Delivery {
        Delivery(
            context: context, recipient: planned.recipients[offset], rendered: planned.rendered[offset],
            deviceRef: planned.recipients[offset].subscription.deviceRef ?? -1, position: position, inDoubt: inDoubt, attempts: attempts,
            hasPendingRow: hasPendingRow, badge: badge
        )
    }
}

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
    var repeats: Set<Int> = []

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
