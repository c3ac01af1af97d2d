import HeraldCore
import HeraldStore

extension ClaimStage {
    /// Hands one window of a broadcast sent in windows (its journal message row exists) to the
    /// engine. A fresh window comes with the `positions` reserved for its recipients (nil: the
    /// device is gone); one that may have been under way before (`positions` nil: its worker
    /// went away, or it is sent again after deferrals) is first checked against the journal, as
    /// a redelivered message is: what is done or queued is skipped, a recorded delivery goes
    /// again at its position, an unrecorded one (perhaps sent just before a crash) again with
    /// the same collapse id. False when the worker stops meanwhile (nothing started).
    func startWindow(_ planned: PlannedMessage, messageId: Int64, positions: [Int64?]?) async -> Bool {
        let context = MessageContext(
            event: planned.event, metadata: planned.metadata, key: planned.key, journalId: messageId, publishedAt: planned.publishedAt)
        let make = { (offset: Int, position: Int64, attempts: Int, hasPendingRow: Bool, inDoubt: Bool) in
            planned.delivery(context, offset: offset, position: position, attempts: attempts, hasPendingRow: hasPendingRow, inDoubt: inDoubt)
        }
        var attachments: [MessageTracker.Attachment] = []
        var skipped = 0
        if let positions {
            attachments.reserveCapacity(positions.count)
            for (offset, position) in positions.enumerated() {
                guard let position else {
                    skipped += 1  // the device is gone
                    continue
                }
                attachments.append(.start(make(offset, position, 0, false, false)))
            }
        } else {
            let devices = planned.recipients.compactMap(\.subscription.deviceRef)
            guard
                let history = await retry.run(
                    "DeliveryJournal.history",
                    { () async throws(StoreError) in try await journal.history(of: planned.key, messageId: messageId, deviceRefs: devices) })
            else { return false }
            var known = KnownDeliveries()
            known.plan(planned, index: 0, history: history, tracker: tracker)
            var reserved: [Int64?] = []
            if !known.needingPositions.isEmpty {
                let devices = known.needingPositions.map(\.deviceRef)
                guard
                    let positions = await retry.run(
                        "DeliveryJournal.reservePositions", { () async throws(StoreError) in try await journal.reservePositions(devices) })
                else { return false }
                reserved = positions
            }
            (attachments, skipped) = known.attachments(of: 0, reserved: reserved, make: make)
        }
        if skipped > 0 { metrics.skipped(skipped) }
        tracker.register([planned.message])
        let (started, settled) = tracker.fanOut([(planned.message, attachments)])
        acknowledger.ack(settled)
        engine.enqueue(started)
        return true
    }
}
