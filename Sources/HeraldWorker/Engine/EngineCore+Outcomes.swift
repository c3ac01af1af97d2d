import HeraldCore
import HeraldDelivery
import HeraldStore
import Logging

/// The senders' answers: terminal outcomes, retries, the journal rows they make.
extension EngineCore {
    mutating func handleOutcome(_ delivery: Delivery, _ outcome: DeliveryOutcome, answerTime: Duration?, released: inout [Lanes.Release]) {
        // Slow by the provider's own answer time, never by how long this loop took to get to it.
        let slow = gates.isSlow(answerTime: answerTime)
        if let sentAt = delivery.sentAt { outcomes.answered(delivery.recipient.subscription.platform, after: turn.clock - sentAt) }
        // No breaker exists and the provider answered in time: nothing to count, nothing is blocked.
        if outcome.isProviderFault || slow || gates.isWatching {
            let provider = ProviderGates.Key(delivery.recipient)
            if let change = gates.record(outcome, slow: slow, for: provider, probe: delivery.isProbe, now: turn.clock) {
                gateChanged(change, released: &released)
            }
            delivery.isProbe = false
            if case .retryAfter(_, let reason, _) = outcome, gates.isBlocked(provider) {
                // Its provider is failing: it waits for the breaker, not for its own retry.
                deferDelivery(delivery, reason: reason, released: &released)
                return
            }
        }
        switch outcome {
        case .sent, .permanentFailure:
            terminal(delivery, outcome, released: &released)
        case .tokenDead(let reason):
            deadTokens.markDead(delivery.recipient.pushTarget)
            logger.info("Device token refused by the provider; device marked dead", metadata: delivery.logMetadata([LogKey.error: "\(reason)"]))
            terminal(delivery, outcome, released: &released)
        case .retryAfter(let after, let reason, let providerFault):
            let elapsed = turn.clock - (delivery.firstAttempt ?? turn.clock)
            switch settings.policy.decide(attempts: delivery.attempts, elapsed: elapsed, retryAfter: after, providerFault: providerFault) {
            case .giveUp(let why):
                let text = "\(reason); gave up after \(delivery.attempts) attempts (\(why.rawValue))"
                terminal(delivery, .permanentFailure(reason: text), released: &released)
            case .retry(let delay):
                metrics.retried()
                logger.info(
                    "Delivery will be retried",
                    metadata: delivery.logMetadata([LogKey.error: "\(reason)", LogKey.attempts: "\(delivery.attempts)", LogKey.retryIn: "\(delay)"]))
                guard delivery.ticket != nil else { return }
                waitInMemory(delivery, until: turn.clock + delay, released: &released)
                // Keep the attempt count and the position for whoever sends it next (a queued
                // delivery's row stays queued: its backlog row is what resumes it).
                if delivery.backlogPlace == nil { queueRecord(delivery, state: .pending, lastError: reason) }
            }
        }
    }

    /// A terminal outcome: the lane goes on, the outcome is queued for the journal.
    mutating func terminal(_ delivery: Delivery, _ outcome: DeliveryOutcome, released: inout [Lanes.Release]) {
        complete(delivery, released: &released)
        outcomes.add(outcome, publishedAt: delivery.context.publishedAt, now: turn.now)
        switch outcome {
        case .sent:
            queueRecord(delivery, state: .sent, lastError: nil)
        case .tokenDead(let reason):
            queueRecord(delivery, state: .tokenDead, lastError: reason)
        case .permanentFailure(let reason), .retryAfter(_, let reason, _):
            if case .permanentFailure = outcome {
                logger.warning("Delivery failed", metadata: delivery.logMetadata([LogKey.error: "\(reason)", LogKey.attempts: "\(delivery.attempts)"]))
            }
            queueRecord(delivery, state: .failed, lastError: reason)
        }
        if delivery.backlogPlace != nil { backlog.recordQueued(for: delivery.recipient.orderingKey) }
        running += 1  // until durable
    }

    /// Its lane goes on: the user's next delivery is released (into `released`).
    mutating func complete(_ delivery: Delivery, released: inout [Lanes.Release]) {
        guard let ticket = delivery.ticket else { return }
        delivery.ticket = nil
        if delivery.backlogPlace != nil { backlog.leftTheLanes(ticket.user) }
        if backlog.has(ticket.user) { backlogTouched.insert(ticket.user) }
        // A ticket completed twice would be a bug here; the scheduler refuses it without
        // corrupting the order, and nothing more can be done about it at run time.
        try? scheduler.complete(ticket, into: &released)
    }

    mutating func queueRecord(_ delivery: Delivery, state deliveryState: DeliveryState, lastError: String?) {
        let record = DeliveryRecord(
            deviceRef: delivery.deviceRef, position: delivery.position, messageId: delivery.context.journalId,
            userId: delivery.recipient.addressedUserId, state: deliveryState, attempts: delivery.attempts,
            lastError: lastError, payload: deliveryState == .sent ? delivery.payload?.loggedBody : nil,
            token: deliveryState == .tokenDead ? delivery.recipient.subscription.token : nil, completesPendingRow: delivery.hasPendingRow,
            backlogPlace: delivery.backlogPlace
        )
        if !deliveryState.isTerminal { delivery.hasPendingRow = true }
        // One row per delivery per statement: a later record replaces one still queued.
        if delivery.hasPendingRow, let index = records.deliveries.lastIndex(where: { $0 === delivery }) {
            if records.rows[index].state.settlesDelivery { running -= 1 }
            records.rows[index] = record
            return
        }
        records.append(delivery, record)
    }

    /// Parks `delivery` until `due` (a retry, or a backlog delivery waiting for its breaker): its
    /// lane goes to others (if it held one; a held delivery is parked already), its user stays
    /// blocked.
    mutating func waitInMemory(_ delivery: Delivery, until due: ContinuousClock.Instant, released: inout [Lanes.Release]) {
        if delivery.backlogPlace != nil, backlog.holding(delivery.recipient.orderingKey).map({ $0 == .leaving }) ?? true {
            // Its scope is handed over: the next holder sends it from its row.
            complete(delivery, released: &released)
            return
        }
        if let ticket = delivery.ticket, let freed = try? scheduler.park(ticket) { released += freed }
        delivery.retryDue = due
        parked.insert(delivery, due: due)
        waitingChanged = true
    }

    mutating func dueRetries(released: inout [Lanes.Release]) {
        guard !turn.stopping else { return }
        for delivery in parked.popDue(now: turn.clock) {
            waitingChanged = true
            delivery.retryDue = nil
            guard let ticket = delivery.ticket, let resumed = try? scheduler.resume(ticket, item: delivery) else { continue }
            released += resumed
        }
    }

    // MARK: Records

    /// Hands the queued rows to record writes, unless they linger.
    mutating func writeRecords() {
        guard !records.isEmpty, recordsInFlight < settings.recordConcurrency else { return }
        if lingers() { return }
        recordsDue = nil
        while !records.isEmpty, recordsInFlight < settings.recordConcurrency {
            actions.recordWrites.append(records.take(settings.recordBatchSize))
            recordsInFlight += 1
        }
    }

    /// Whether the queued records, fewer than ``Settings/recordLingerBelow``, wait for more: up
    /// to ``Settings/recordLinger`` after the turn that found them waiting (a wake-up is asked
    /// for then). Never while stopping or finishing.
    private mutating func lingers() -> Bool {
        guard settings.recordLinger > .zero, records.count < settings.recordLingerBelow, !turn.stopping, !turn.finished else { return false }
        let due = recordsDue ?? turn.clock + settings.recordLinger
        recordsDue = due
        return turn.clock < due
    }
}
