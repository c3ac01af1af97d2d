import Foundation
import HeraldAMQP
import HeraldCore
import HeraldStore
import Logging

/// Turns chunks of AMQP messages into scheduled deliveries, in arrival order.
///
/// For a chunk (everything the consumer had buffered, up to ``WorkerConfiguration/maxChunk``):
/// 1. decode each message; an undecodable one → dead-letter queue;
/// 2. look its event up in the template catalog (cached); unknown → dead-letter queue;
/// 3. read the subscriptions of every user of the chunk at once (cached), and for broadcasts
///    every deliverable subscription;
/// 4. select the recipients and render every (culture, platform) they need, plus the default
///    culture on every platform the event has a template for, so that a bad message is refused
///    whoever subscribes; any render error → the whole message to the dead-letter queue before
///    anything is sent; no recipient → acknowledged;
/// 5. `AvoidDublication` messages: one dedupe call for the chunk; a repeat (not itself a
///    redelivery) → acknowledged and counted;
/// 6. one claim call for every delivery of the chunk, in order: the journal answers fresh (with
///    the device position), in doubt, or already done (skipped);
/// 7. enqueue the deliveries to claim in their users' lanes, in order.
///
/// A partition copy (`worker.partitions` > 0) carries a ``PartitionSlice``: only its users'
/// subscriptions are read and selected (for a broadcast, the devices whose selected subscription
/// belongs to one of its users), and its `AvoidDublication` key names the partition.
///
/// Chunks are processed one after the other, so claims (and device positions) follow the order
/// in which messages arrived, which is each user's order. A store call that fails is retried
/// with backoff; when the worker stops meanwhile, the chunk is left unsettled (requeued).
struct MessageIntake: Sendable {
    let configuration: WorkerConfiguration
    let store: Store
    let tracker: MessageTracker
    let scheduler: LaneScheduler
    let deadLetters: DeadLetterPublisher
    let acknowledger: Acknowledger
    let audience: BroadcastAudience
    let metrics: WorkerMetrics
    let retry: StoreRetry
    let logger: Logger

    private struct RenderKey: Hashable {
        let culture: String
        let platform: Platform
    }

    /// A decoded message of known event.
    private struct Candidate {
        let item: DeliveryInbox.Item
        let event: Event
        let metadata: EventMetadata
        let messageKey: String
        var recipients: [Recipient] = []
        var renders: [RenderKey: RenderedNotification] = [:]

        var needsEveryone: Bool { event.userIds.isEmpty || event.isBroadcast }
        /// For a partition copy: the users it is for.
        var slice: PartitionSlice? { item.message.slice }
        /// The event's users this message delivers to (those of its partition, for a copy).
        var users: [String] {
            guard let slice else { return event.userIds }
            return event.userIds.filter { slice.contains(user: $0) }
        }
    }

    func process(_ chunk: [DeliveryInbox.Item]) async {
        guard let catalog = await retry.run("TemplateCache.catalog", { () async throws(StoreError) in try await store.templateCache.catalog() }) else {
            return
        }

        // 1–2: decode, find the event.
        var candidates: [Candidate] = []
        candidates.reserveCapacity(chunk.count)
        for item in chunk {
            let delivery = item.message.delivery
            let messageKey = IncomingMessage.messageKey(delivery)
            let event: Event
            do {
                event = try configuration.decoder.decode(delivery.body, contentType: delivery.properties.contentType).event
            } catch {
                await deadLetter(item, .undecodable, error.description, eventId: nil, messageKey: messageKey)
                continue
            }
            guard let metadata = catalog.metadata(forEventId: event.id) else {
                await deadLetter(item, .unknownEvent, "no template defines event id \(event.id.prefix(128))", eventId: event.id, messageKey: messageKey)
                continue
            }
            candidates.append(Candidate(item: item, event: event, metadata: metadata, messageKey: messageKey))
        }
        guard !candidates.isEmpty else { return }

        // 3: subscriptions for the whole chunk.
        var users = Set<String>()
        for candidate in candidates where !candidate.needsEveryone { users.formUnion(candidate.users) }
        var byUser: [String: [Subscription]] = [:]
        if !users.isEmpty {
            guard let loaded = await retry.run("SubscriptionCache.subscriptions", { () async throws(StoreError) in
                try await store.subscriptionCache.subscriptions(forUsers: users)
            }) else { return }
            byUser = loaded
        }
        var everyone: BroadcastAudience.Snapshot?
        if candidates.contains(where: \.needsEveryone) {
            guard let loaded = await retry.run("DeviceRepository.allSubscriptions", { () async throws(StoreError) in try await audience.snapshot() })
            else { return }
            everyone = loaded
        }

        // 4: select and render.
        let selector = RecipientSelector(policy: configuration.selectionPolicy)
        var ready: [Candidate] = []
        for var candidate in candidates {
            let event = candidate.event
            let pool = candidate.needsEveryone ? everyone?.candidates(for: event) ?? [] : candidate.users.flatMap { byUser[$0] ?? [] }
            do {
                candidate.recipients = try selector.select(event, tag: candidate.metadata.tag, from: pool)
                if let slice = candidate.slice {
                    // A broadcast is selected from every device (once per device, through the
                    // first matching subscription) and then kept by the partition of that
                    // subscription's user, which is also its ordering lane: each device once,
                    // across all partitions.
                    candidate.recipients.removeAll { !slice.contains(user: $0.subscription.userId) }
                }
            } catch {
                await deadLetter(candidate.item, .noAddressee, error.description, eventId: event.id, messageKey: candidate.messageKey)
                continue
            }
            do {
                for recipient in candidate.recipients {
                    let key = RenderKey(culture: recipient.subscription.culture.lowercased(), platform: recipient.subscription.platform)
                    if candidate.renders[key] == nil {
                        candidate.renders[key] = try catalog.render(event, culture: recipient.subscription.culture, platform: key.platform)
                    }
                }
                try catalog.validateInDefaultCulture(event)
            } catch {
                await deadLetter(candidate.item, DeadLetterCode.forTemplateError(error), error.description, eventId: event.id, messageKey: candidate.messageKey)
                continue
            }
            if candidate.recipients.isEmpty {
                metrics.noRecipients()
                settle(candidate.item)
                continue
            }
            ready.append(candidate)
        }

        // 5: drop repeats of AvoidDublication messages.
        let deduped = ready.indices.filter { IncomingMessage.avoidsDuplication(ready[$0].item.message.delivery) }
        if !deduped.isEmpty {
            let keys = deduped.map { ready[$0].slice?.dedupeKey(messageKey: ready[$0].messageKey) ?? ready[$0].messageKey }
            guard let firstSeen = await retry.run("DedupeRepository.firstSeen", { () async throws(StoreError) in try await store.dedupe.firstSeen(keys) })
            else { return }
            var repeats = Set<Int>()
            for (k, index) in deduped.enumerated() where !firstSeen[k] {
                // A redelivered message may have been registered by a worker that died before
                // finishing it, a replayed dead letter by the attempt that failed: the journal,
                // not the dedupe key, decides for those.
                let delivery = ready[index].item.message.delivery
                guard !delivery.redelivered, delivery.properties.headers[DeadLetterHeaders.replayed] == nil else { continue }
                repeats.insert(index)
                metrics.duplicate()
                logger.info("Repeated message dropped (AvoidDublication)", metadata: [
                    LogKey.messageKey: "\(ready[index].messageKey)", LogKey.eventId: "\(ready[index].event.id)",
                ])
                settle(ready[index].item)
            }
            if !repeats.isEmpty { ready = ready.indices.filter { !repeats.contains($0) }.map { ready[$0] } }
        }
        guard !ready.isEmpty else { return }

        // 6: claim every delivery of the chunk at once, in order.
        var claims: [DeliveryClaim] = []
        for candidate in ready {
            for recipient in candidate.recipients { claims.append(DeliveryClaim(messageKey: candidate.messageKey, recipient: recipient)) }
        }
        guard let results = await retry.run("DeliveryJournal.claim", { () async throws(StoreError) in try await store.journal.claim(claims) })
        else { return }

        // 7: fan out into the lanes.
        var scheduled: [ScheduledDelivery] = []
        var next = 0
        for candidate in ready {
            let id = candidate.item.id
            let publishedAt = IncomingMessage.publishedAt(candidate.item.message.delivery)
            for recipient in candidate.recipients {
                let claim = claims[next]
                let result = results[next]
                next += 1
                let inDoubt: Bool
                let previousAttempts: Int
                switch result {
                case .fresh: (inDoubt, previousAttempts) = (false, 0)
                case .inDoubt(_, let attempts): (inDoubt, previousAttempts) = (true, attempts)
                case .alreadySent, .alreadyTerminal, .unknownDevice:
                    metrics.skipped()
                    continue
                }
                guard tracker.attach(id, to: claim.deliveryKey) == .started else {
                    metrics.skipped()
                    continue
                }
                let renderKey = RenderKey(culture: recipient.subscription.culture.lowercased(), platform: recipient.subscription.platform)
                scheduled.append(ScheduledDelivery(
                    key: claim.deliveryKey, recipient: recipient, event: candidate.event, rendered: candidate.renders[renderKey]!,
                    position: result.position ?? 0, inDoubt: inDoubt, previousAttempts: previousAttempts, publishedAt: publishedAt,
                    messageKey: candidate.messageKey
                ))
            }
            if let message = tracker.seal(id) { acknowledger.ack(message) }
        }
        scheduler.enqueue(scheduled)
    }

    /// Acknowledges a message that needs no delivery.
    private func settle(_ item: DeliveryInbox.Item) {
        if let message = tracker.remove(item.id) { acknowledger.ack(message) }
    }

    private func deadLetter(_ item: DeliveryInbox.Item, _ code: DeadLetterCode, _ reason: String, eventId: String?, messageKey: String) async {
        guard await deadLetters.deadLetter(item.message, code: code, reason: reason, eventId: eventId, messageKey: messageKey) else { return }
        settle(item)
    }
}
