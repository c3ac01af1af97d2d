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
    /// What becomes of each message and delivery is ``ClaimDecisions``'; this reads the journal
    /// between its steps and carries the result out.
    func process(_ chunk: [PlannedMessage], claim: PendingClaim?) async {
        guard let claim else { return }
        defer { queue.pass(claim) }
        guard let answer = await retry.run("DeliveryJournal.claim", { () async throws(StoreError) in try await claim.answer() }) else { return }
        var decisions = ClaimDecisions(chunk: chunk, answer: answer)

        // Known messages: what the journal has of them.
        var histories: [UUID: MessageHistory] = [:]
        if !decisions.known.isEmpty {
            guard
                let loaded = await retry.run(
                    "DeliveryJournal.history",
                    { () async throws(StoreError) in
                        try await journal.history(of: decisions.known.map { chunk[$0].key })
                    })
            else { return }
            for history in loaded { histories[history.key.digest] = history }
        }
        decisions.resume(histories, now: Date(), duplicateWindow: journal.duplicateWindow, tracker: tracker)
        for repeated in decisions.knownRepeats { dropRepeat(chunk[repeated.index]) }
        for index in decisions.missing {
            // Expired between the claim and now: it comes again and is claimed as new.
            logger.warning("A known message's journal row is gone; leaving it for redelivery", metadata: [LogKey.messageKey: "\(chunk[index].key)"])
        }
        var reserved: [Int64?] = []
        if !decisions.resumed.needingPositions.isEmpty {
            guard
                let positions = await retry.run(
                    "DeliveryJournal.reservePositions",
                    { () async throws(StoreError) in
                        try await journal.reservePositions(decisions.resumed.needingPositions.map(\.deviceRef))
                    })
            else { return }
            reserved = positions
        }

        let result = decisions.fanOut(reserved: reserved)
        for repeated in result.repeats { dropRepeat(chunk[repeated.index]) }
        if result.skipped > 0 { metrics.skipped(result.skipped) }
        let (started, settled) = tracker.fanOut(result.attachments)
        acknowledger.ack(settled)
        engine.enqueue(started)
        let repeats = decisions.knownRepeats + result.repeats
        if !repeats.isEmpty {
            // For support lookups only, after the acknowledgements: not retried, and a failure
            // costs nothing but the note.
            do {
                try await journal.noteRepeats(repeats.map(\.journalId))
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
}
