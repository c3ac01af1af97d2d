import Foundation
import HeraldCore
import HeraldDelivery
import HeraldStore
import Logging

/// Runs one released delivery: (for an in-doubt claim, ask the sender whether it already went
/// out) → build the payload with the claimed position → send → retry with the ``RetryPolicy``
/// inside the user's lane → free the lane → record the outcome (batched) → acknowledge the
/// messages that have nothing left to wait for.
///
/// The lane is freed as soon as the outcome is terminal, before the record is written: order
/// at the provider is kept (the next delivery of the user starts after this one was answered),
/// and the message is acknowledged only after the record is durable.
struct DeliveryExecutor: Sendable {
    let sender: any PushSender
    let builder: PayloadBuilder
    let policy: RetryPolicy
    let scheduler: LaneScheduler
    let tracker: MessageTracker
    let recorder: Batcher<DeliveryRecord>
    let deadTokens: DeadTokenRegistry
    let acknowledger: Acknowledger
    let metrics: WorkerMetrics
    let stop: StopSignal
    /// The journal's state of a delivery, read before an in-doubt delivery is sent: another
    /// copy of its message may have recorded it between our claim and now.
    let recordedState: @Sendable (DeliveryKey) async -> DeliveryState?
    let logger: Logger

    private enum Attempt {
        case terminal(DeliveryOutcome, attempts: Int, payload: PushPayload?)
        /// Stopped while waiting to retry: not terminal.
        case abandoned(attempts: Int, reason: String)
        /// Every message waiting for it went with a lost connection: not terminal, not ours.
        case orphaned(attempts: Int, reason: String)
    }

    func execute(_ release: LaneScheduler.Release) async {
        metrics.started()
        defer { metrics.ended() }
        let delivery = release.item
        guard !stop.isStopping else {
            abandon(delivery)
            return
        }
        guard tracker.isAwaited(delivery.key) else {
            // Its messages were requeued with a lost connection: the user's lane goes on; the
            // message comes again (here or elsewhere) and claims the delivery anew.
            scheduler.complete(release.ticket)
            abandon(delivery)
            return
        }
        switch await attempt(delivery) {
        case .abandoned(let attempts, let reason):
            // Keep the attempt count for the next worker; the message is requeued.
            _ = await recorder.submit(.retrying(delivery.key, attempts: attempts, reason: reason))
            abandon(delivery)
        case .orphaned(let attempts, let reason):
            scheduler.complete(release.ticket)
            _ = await recorder.submit(.retrying(delivery.key, attempts: attempts, reason: reason))
            abandon(delivery)
        case .terminal(let outcome, let attempts, let payload):
            scheduler.complete(release.ticket)
            metrics.outcome(outcome, publishedAt: delivery.publishedAt)
            let record = record(for: outcome, delivery: delivery, attempts: attempts, payload: payload)
            guard await recorder.submit(record) else {
                // Aborted before the outcome was stored: the message must not be acknowledged.
                abandon(delivery)
                return
            }
            acknowledger.ack(tracker.finish(delivery.key))
        }
    }

    private func abandon(_ delivery: ScheduledDelivery) {
        tracker.abandon(delivery.key)
        metrics.abandoned()
    }

    private func attempt(_ delivery: ScheduledDelivery) async -> Attempt {
        let target = delivery.recipient.pushTarget
        var attempts = delivery.previousAttempts
        let payload: PushPayload
        do {
            payload = try builder.build(
                delivery.rendered, event: delivery.event, target: target, deliveryKey: delivery.key, now: Date(), position: Int64(delivery.position)
            )
        } catch {
            logger.warning("Payload cannot be built; delivery failed", metadata: metadata(delivery, [LogKey.error: "\(error)"]))
            return .terminal(.permanentFailure(reason: error.description), attempts: attempts, payload: nil)
        }
        if delivery.inDoubt {
            switch await recordedState(delivery.key) {
            case .sent?:
                // Another copy of the message finished it since our claim.
                return .terminal(.sent, attempts: max(attempts, 1), payload: payload)
            case .tokenDead?:
                return .terminal(.tokenDead(reason: "recorded earlier"), attempts: attempts, payload: payload)
            case .failed?:
                return .terminal(.permanentFailure(reason: "recorded earlier"), attempts: attempts, payload: payload)
            case .pending?, nil:
                break
            }
            if await sender.reconcile(delivery.key) == .delivered {
                // A crash lost the outcome of a delivery that did go out: record it, do not resend.
                return .terminal(.sent, attempts: max(attempts, 1), payload: payload)
            }
        }
        let push = PushDelivery(
            deliveryKey: delivery.key, deviceId: delivery.recipient.subscription.deviceId, userId: delivery.recipient.addressedUserId,
            eventId: delivery.event.id, position: Int64(delivery.position), target: target, payload: payload
        )
        let started = ContinuousClock.now
        while true {
            if deadTokens.isDead(target) {
                return .terminal(.tokenDead(reason: "the provider refused this token earlier"), attempts: attempts, payload: payload)
            }
            attempts += 1
            let outcome = await sender.send(push)
            switch outcome {
            case .sent:
                return .terminal(outcome, attempts: attempts, payload: payload)
            case .tokenDead(let reason):
                deadTokens.markDead(target)
                logger.info("Device token refused by the provider; device marked dead", metadata: metadata(delivery, [LogKey.error: "\(reason)"]))
                return .terminal(outcome, attempts: attempts, payload: payload)
            case .permanentFailure(let reason):
                logger.warning("Delivery failed permanently", metadata: metadata(delivery, [LogKey.error: "\(reason)", LogKey.attempts: "\(attempts)"]))
                return .terminal(outcome, attempts: attempts, payload: payload)
            case .retryAfter(let after, let reason):
                switch policy.decide(attempts: attempts, elapsed: ContinuousClock.now - started, retryAfter: after) {
                case .giveUp(let why):
                    let text = "\(reason); gave up after \(attempts) attempts (\(why.rawValue))"
                    logger.warning("Delivery failed after retries", metadata: metadata(delivery, [LogKey.error: "\(text)"]))
                    return .terminal(.permanentFailure(reason: text), attempts: attempts, payload: payload)
                case .retry(let delay):
                    metrics.retried()
                    logger.info(
                        "Delivery will be retried", metadata: metadata(delivery, [LogKey.error: "\(reason)", LogKey.attempts: "\(attempts)", LogKey.retryIn: "\(delay)"])
                    )
                    guard await stop.sleep(for: delay) else { return .abandoned(attempts: attempts, reason: reason) }
                    guard tracker.isAwaited(delivery.key) else { return .orphaned(attempts: attempts, reason: reason) }
                }
            }
        }
    }

    private func record(for outcome: DeliveryOutcome, delivery: ScheduledDelivery, attempts: Int, payload: PushPayload?) -> DeliveryRecord {
        switch outcome {
        case .sent:
            let body = payload.map { String(decoding: $0.body, as: UTF8.self) } ?? "{}"
            return .sent(delivery.key, attempts: attempts, eventId: delivery.event.id, payload: body)
        case .tokenDead(let reason):
            return .tokenDead(delivery.key, attempts: attempts, token: delivery.recipient.subscription.token, reason: reason)
        case .permanentFailure(let reason), .retryAfter(_, let reason):
            return .failed(delivery.key, attempts: attempts, reason: reason)
        }
    }

    private func metadata(_ delivery: ScheduledDelivery, _ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            LogKey.eventId: "\(delivery.event.id)",
            LogKey.userId: "\(delivery.recipient.addressedUserId)",
            LogKey.deviceId: "\(delivery.recipient.subscription.deviceId)",
            LogKey.platform: "\(delivery.recipient.subscription.platform)",
            LogKey.token: "\(LogKey.shortToken(delivery.recipient.subscription.token))",
            LogKey.deliveryKey: "\(delivery.key)",
            LogKey.messageKey: "\(delivery.messageKey)",
        ]
        metadata.merge(extra) { _, new in new }
        return metadata
    }
}
