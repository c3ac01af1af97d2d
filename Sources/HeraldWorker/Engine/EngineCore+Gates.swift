import HeraldCore
import HeraldStore
import Logging

/// Provider outages: the circuit breakers' changes and the deliveries they defer.
extension EngineCore {
    /// A breaker opened (its parked and held deliveries are deferred) or closed (its held
    /// deliveries go).
    mutating func gateChanged(_ change: ProviderGates.Change, released: inout [Lanes.Release]) {
        switch change {
        case .opened(let key, let reopensAt, let reason):
            metrics.circuit(provider: key.platform, app: key.app, state: .open(until: reopensAt))
            let waiting = parked.removeAll { ProviderGates.Key($0.recipient) == key }
            let held = gates.releaseHeld(key)
            logger.warning(
                "Provider failing: circuit open, its deliveries wait",
                metadata: [
                    LogKey.platform: "\(key.platform)", LogKey.app: "\(key.app ?? "default")", LogKey.error: "\(reason)",
                    LogKey.retryIn: "\(reopensAt - turn.clock)", LogKey.count: "\(waiting.count + held.count)",
                ])
            for delivery in waiting + held {
                delivery.retryDue = nil
                deferDelivery(delivery, reason: reason, released: &released)
            }
        case .closed(let key):
            metrics.circuit(provider: key.platform, app: key.app, state: .closed)
            logger.notice("Provider answers again: circuit closed", metadata: [LogKey.platform: "\(key.platform)", LogKey.app: "\(key.app ?? "default")"])
            for delivery in gates.releaseHeld(key) {
                guard let ticket = delivery.ticket, let resumed = try? scheduler.resume(ticket, item: delivery) else { continue }
                released += resumed
            }
        }
        waitingChanged = true
    }

    /// Its provider's breaker is open. While this worker holds the backlog, the delivery goes to
    /// its user's backlog with the user's deliveries waiting behind it, its lane goes on, and
    /// they go out in order once the breaker's probe succeeds. Otherwise (the backlog off, or a
    /// worker that does not hold it) a `.deferred` row keeps its position and attempts, the lane
    /// goes on, and its message is republished to the wait queue once settled.
    mutating func deferDelivery(_ delivery: Delivery, reason: String, released: inout [Lanes.Release]) {
        let key = ProviderGates.Key(delivery.recipient)
        let until = gates.reopensAt(key) ?? turn.clock + settings.circuitBreaker.initialOpen
        let user = delivery.recipient.orderingKey
        if delivery.backlogPlace != nil || backlog.has(user) {
            // Queued already, or ahead of its user's queued ones (it waited in memory when they
            // were queued): it waits here, the user's later ones behind it, until the breaker
            // lets a probe through.
            waitInMemory(delivery, until: until, released: &released)
            return
        }
        if turn.stopping {
            // Like every delivery still waiting at a stop: dropped, its message comes again at
            // once (a copy in the wait queue would come back after its user's later ones).
            delivery.ticket = nil
            actions.settlements.append(.drop([delivery]))
            return
        }
        metrics.deferred(key.platform)
        if backlog.queues(user) {
            // Queued first, then the user's waiting ones behind it (before its lane frees them).
            let behind = scheduler.removeWaiting(user: user)
            complete(delivery, released: &released)
            queue(delivery, in: user)
            for later in behind { queue(later, in: user) }
            return
        }
        complete(delivery, released: &released)
        actions.settlements.append(.deferred([delivery], until: until))
        queueRecord(delivery, state: .deferred, lastError: "deferred, provider failing: \(reason)")
        running += 1  // until durable
    }

    /// The waiting gauge per provider: parked for a retry or held for a probe.
    mutating func reportWaiting() {
        waitingChanged = false
        for platform in Platform.allCases {
            metrics.waiting(platform, parked.count(platform) + gates.heldCount(platform))
        }
    }
}
