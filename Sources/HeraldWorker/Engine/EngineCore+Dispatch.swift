import HeraldCore
import HeraldDelivery
import Logging

/// What the lanes released this turn: looked up first if in doubt, otherwise built and sent as
/// one batch, unless its token is dead or its provider's breaker holds it.
extension EngineCore {
    mutating func dispatch(_ released: [Lanes.Release]) {
        var batch: [Delivery] = []
        batch.reserveCapacity(released.count + readyToSend.count)
        batch += readyToSend
        readyToSend.removeAll()
        var orphans: [Delivery] = []
        var nextReleases: [Lanes.Release] = []
        var pending = released
        while !pending.isEmpty {
            let awaited = areAwaited(pending.map(\.item))
            for (release, isAwaited) in zip(pending, awaited) {
                let delivery = release.item
                delivery.ticket = release.ticket
                // A delivery from the backlog is awaited by no message: its row is what waits,
                // and the worker that holds it sends it.
                if delivery.backlogPlace != nil, !isAwaited, backlog.holding(delivery.recipient.orderingKey) == nil {
                    complete(delivery, released: &nextReleases)
                    continue
                }
                guard isAwaited || delivery.backlogPlace != nil else {
                    // Its messages were requeued with a lost connection: the user's lane goes
                    // on; the message comes again (here or elsewhere) and claims it anew.
                    orphans.append(delivery)
                    complete(delivery, released: &nextReleases)
                    continue
                }
                if delivery.inDoubt {
                    actions.reconcile.append(delivery)
                    continue
                }
                batch.append(delivery)
            }
            pending = nextReleases
            nextReleases.removeAll()
        }
        running += actions.reconcile.count
        if !orphans.isEmpty { actions.settlements.append(.drop(orphans)) }
        send(batch)
    }

    private mutating func send(_ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
        actions.pushes.reserveCapacity(deliveries.count)
        actions.sends.reserveCapacity(deliveries.count)
        var failures: [(Delivery, DeliveryOutcome)] = []
        var deferrals: [Delivery] = []
        for delivery in deliveries {
            let target = delivery.recipient.pushTarget
            if !deadTokens.isEmpty, deadTokens.isDead(target) {
                failures.append((delivery, .tokenDead(reason: "the provider refused this token earlier")))
                continue
            }
            let key = delivery.key
            if delivery.payload == nil {
                do {
                    delivery.payload = try settings.builder.build(
                        delivery.rendered, event: delivery.context.event, target: target, deliveryKey: key, now: turn.now, badge: delivery.badge,
                        position: delivery.position
                    )
                } catch {
                    logger.warning("Payload cannot be built; delivery failed", metadata: delivery.logMetadata([LogKey.error: "\(error)"]))
                    failures.append((delivery, .permanentFailure(reason: error.description)))
                    continue
                }
            }
            if gates.isWatching {
                // A provider failed lately: its breaker decides (after the payload is built, so
                // that a probe is always sent).
                let provider = ProviderGates.Key(delivery.recipient)
                switch gates.verdict(provider, now: turn.clock) {
                case .send:
                    break
                case .probe:
                    delivery.isProbe = true
                    metrics.circuit(provider: provider.platform, app: provider.app, state: .halfOpen(probing: true))
                case .hold:
                    // Until the probe answers; the lane serves others meanwhile.
                    if let ticket = delivery.ticket, let freed = try? scheduler.park(ticket) { carried += freed }
                    gates.hold(delivery, for: provider)
                    waitingChanged = true
                    continue
                case .reject:
                    deferrals.append(delivery)
                    continue
                }
            }
            delivery.attempts += 1
            if delivery.firstAttempt == nil { delivery.firstAttempt = turn.clock }
            delivery.sentAt = turn.clock
            actions.pushes.append(
                PushDelivery(
                    deliveryKey: key, deviceId: delivery.recipient.subscription.deviceId, userId: delivery.recipient.addressedUserId,
                    eventId: delivery.context.event.id, position: delivery.position, target: target, payload: delivery.payload!
                ))
            actions.sends.append(delivery)
        }
        running += actions.sends.count
        // Lanes freed here are served on the next turn.
        var freed: [Lanes.Release] = []
        for (delivery, outcome) in failures { terminal(delivery, outcome, released: &freed) }
        for delivery in deferrals {
            deferDelivery(delivery, reason: gates.reason(ProviderGates.Key(delivery.recipient)), released: &freed)
        }
        carried += freed
        if !carried.isEmpty { actions.turnAgain = true }
    }
}
