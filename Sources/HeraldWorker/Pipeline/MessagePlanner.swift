import Foundation
import HeraldAMQP
import HeraldCore
import HeraldStore
import Logging

/// Turns a chunk of AMQP messages into ``PlannedMessage``s, in arrival order; everything here is
/// CPU and cached reads, so it runs while the previous chunk's claim is in the database.
///
/// For a chunk (everything the consumer had buffered, up to ``WorkerConfiguration/maxChunk``):
/// 1. decode each message; an undecodable one → dead-letter queue;
/// 2. look its event up in the template catalog (cached); unknown → dead-letter queue;
/// 3. read the subscriptions of every user of the chunk at once (cached), and for broadcasts
///    every deliverable subscription, while they fit in memory (otherwise a broadcast is handed
///    to the ``BroadcastRunner``, which sends it in windows);
/// 4. select the recipients and render every (culture, platform) they need, plus the default
///    culture on every platform the event has a template for, so that a bad message is refused
///    whoever subscribes; any render error → the whole message to the dead-letter queue before
///    anything is sent; no recipient → acknowledged.
///
/// A partition copy (`worker.partitions` > 0) carries a ``PartitionSlice``: only its users'
/// subscriptions are read and selected (for a broadcast, the devices whose selected subscription
/// belongs to one of its users), and its journal key names the partition. A store call that
/// fails is retried with backoff; when the worker stops meanwhile, the chunk is given up
/// (unsettled: requeued).
struct MessagePlanner: Sendable {
    let configuration: WorkerConfiguration
    let store: Store
    let tracker: MessageTracker
    let deadLetters: DeadLetterPublisher
    let acknowledger: Acknowledger
    let audience: BroadcastAudience
    /// Broadcasts whose audience does not fit in memory go to it (set once it exists: it needs
    /// the claim stage).
    let broadcasts: BroadcastRunner?
    let metrics: WorkerMetrics
    let retry: StoreRetry

    /// A decoded message of known event.
    private struct Candidate {
        let message: TrackedMessage
        let event: Event
        let metadata: EventMetadata
        let messageKey: String
        /// The event's users this message delivers to (those of its partition, for a copy).
        let users: [String]
        /// A broadcast, or an event without users: selected from every subscription.
        let needsEveryone: Bool

        init(message: TrackedMessage, event: Event, metadata: EventMetadata, messageKey: String) {
            self.message = message
            self.event = event
            self.metadata = metadata
            self.messageKey = messageKey
            let userIds = event.userIds
            needsEveryone = userIds.isEmpty || event.isBroadcast
            users = message.slice.map { slice in userIds.filter { slice.contains(user: $0) } } ?? userIds
        }
    }

    /// Where the chunk's users' subscriptions come from: the broadcast audience while it is
    /// current (it then answers as the database would, and a lookup copies nothing), otherwise
    /// the cache, read once for the chunk's users.
    private enum UserSubscriptions {
        case audience(BroadcastAudience.Snapshot)
        case loaded([String: [Subscription]])

        func of(_ user: String) -> ArraySlice<Subscription> {
            switch self {
            case .audience(let snapshot): snapshot.subscriptions(ofUser: user)
            case .loaded(let byUser): byUser[user]?[...] ?? []
            }
        }

        /// The subscriptions of `users`, in their order.
        func of(_ users: [String]) -> ArraySlice<Subscription> {
            users.count == 1 ? of(users[0]) : ArraySlice(users.flatMap { of($0) })
        }
    }

    /// The subscriptions of the targeted candidates' users (none read when there are none);
    /// nil when stopping.
    private func subscriptions(of candidates: [Candidate]) async -> UserSubscriptions? {
        if let current = audience.current(), current.indexesUsers { return .audience(current) }
        var users = Set<String>()
        for candidate in candidates where !candidate.needsEveryone { users.formUnion(candidate.users) }
        guard !users.isEmpty else { return .loaded([:]) }
        let loaded = await retry.run("SubscriptionCache.subscriptions") { () async throws(StoreError) in
            try await store.subscriptionCache.subscriptions(forUsers: users)
        }
        return loaded.map { .loaded($0) }
    }

    /// The chunk's messages that make deliveries; nil when stopping (the chunk stays unsettled).
    func plan(_ chunk: [TrackedMessage]) async -> [PlannedMessage]? {
        guard let catalog = await retry.run("TemplateCache.catalog", { () async throws(StoreError) in try await store.templateCache.catalog() }) else {
            return nil
        }

        // 1–2: decode, find the event.
        var candidates: [Candidate] = []
        candidates.reserveCapacity(chunk.count)
        for message in chunk {
            let messageKey = IncomingMessage.messageKey(message.delivery)
            switch EventAdmission.admit(message.delivery, decoded: message.decoded, decoder: configuration.decoder, catalog: catalog) {
            case .admitted(let event, let metadata):
                candidates.append(Candidate(message: message, event: event, metadata: metadata, messageKey: messageKey))
            case .refused(let code, let reason, let eventId):
                await deadLetter(message, code, reason, eventId: eventId, messageKey: messageKey)
            }
        }
        guard !candidates.isEmpty else { return [] }

        // 3: subscriptions for the whole chunk.
        guard let byUser = await subscriptions(of: candidates) else { return nil }
        var everyone: BroadcastAudience.Snapshot?
        if candidates.contains(where: \.needsEveryone) {
            guard let loaded = await retry.run("DeviceRepository.allSubscriptions", { () async throws(StoreError) in try await audience.snapshot() })
            else { return nil }
            everyone = loaded
        }
        let inWindows = everyone == nil ? broadcasts : nil

        // 4: select and render.
        let selector = RecipientSelector(policy: configuration.selectionPolicy)
        var planned: [PlannedMessage] = []
        planned.reserveCapacity(candidates.count)
        for candidate in candidates {
            let event = candidate.event
            if candidate.needsEveryone, let inWindows {
                // Checked as the in-memory path checks it, before it is acknowledged.
                do throws(RecipientSelectionError) {
                    try selector.validate(event)
                } catch {
                    await deadLetter(candidate.message, .noAddressee, error.description, eventId: event.id, messageKey: candidate.messageKey)
                    continue
                }
                do throws(TemplateError) {
                    try catalog.validateInDefaultCulture(event)
                } catch {
                    await deadLetter(
                        candidate.message, DeadLetterCode.forTemplateError(error), error.description, eventId: event.id, messageKey: candidate.messageKey)
                    continue
                }
                await inWindows.begin(
                    candidate.message, event: event, metadata: candidate.metadata,
                    key: MessageKey(text: candidate.messageKey, partitionSuffix: candidate.message.slice?.journalSuffix ?? ""))
                continue
            }
            let pool = candidate.needsEveryone ? ArraySlice(everyone?.candidates(for: event) ?? []) : byUser.of(candidate.users)
            var recipients: [Recipient]
            do {
                recipients = try selector.select(event, tag: candidate.metadata.tag, from: pool)
                if let slice = candidate.message.slice {
                    // A broadcast is selected from every device (once per device, through the
                    // first matching subscription) and then kept by the partition of that
                    // subscription's user, which is also its ordering lane: each device once,
                    // across all partitions.
                    recipients.removeAll { !slice.contains(user: $0.subscription.userId) }
                }
            } catch {
                await deadLetter(candidate.message, .noAddressee, error.description, eventId: event.id, messageKey: candidate.messageKey)
                continue
            }
            var rendered: [RenderedNotification] = []
            rendered.reserveCapacity(recipients.count)
            do throws(TemplateError) {
                // Renders per (culture, platform), looked up by the subscription's exact culture
                // string first (one culture per event is the common case).
                var renders: [(culture: String, platform: Platform, text: RenderedNotification)] = []
                for recipient in recipients {
                    let culture = recipient.subscription.culture, platform = recipient.subscription.platform
                    if let hit = renders.first(where: { $0.platform == platform && $0.culture == culture }) {
                        rendered.append(hit.text)
                        continue
                    }
                    let lowered = culture.lowercased()
                    let text: RenderedNotification
                    if let hit = renders.first(where: { $0.platform == platform && $0.culture.lowercased() == lowered }) {
                        text = hit.text
                    } else {
                        text = try catalog.render(event, culture: culture, platform: platform)
                    }
                    renders.append((culture, platform, text))
                    rendered.append(text)
                }
                try catalog.validateInDefaultCulture(event)
            } catch {
                await deadLetter(
                    candidate.message, DeadLetterCode.forTemplateError(error), error.description, eventId: event.id, messageKey: candidate.messageKey)
                continue
            }
            if recipients.isEmpty {
                metrics.noRecipients()
                settle(candidate.message)
                continue
            }
            let delivery = candidate.message.delivery
            let mayBeKnown =
                delivery.redelivered || delivery.properties.headers[DeadLetterHeaders.replayed] != nil
                || delivery.properties.headers[DeferredCopy.countHeader] != nil
            let dropsRepeats = IncomingMessage.avoidsDuplication(delivery) && !mayBeKnown
            planned.append(
                PlannedMessage(
                    message: candidate.message, event: event, metadata: candidate.metadata,
                    key: MessageKey(text: candidate.messageKey, partitionSuffix: candidate.message.slice?.journalSuffix ?? ""),
                    dropsRepeats: dropsRepeats, mayBeKnown: mayBeKnown, publishedAt: IncomingMessage.publishedAt(delivery), recipients: recipients,
                    rendered: rendered
                ))
        }
        return planned
    }

    /// Acknowledges a message that needs no delivery.
    private func settle(_ message: TrackedMessage) {
        if tracker.settle(message) { acknowledger.ack(message) }
    }

    private func deadLetter(_ message: TrackedMessage, _ code: DeadLetterCode, _ reason: String, eventId: String?, messageKey: String) async {
        guard await deadLetters.deadLetter(message, code: code, reason: reason, eventId: eventId, messageKey: messageKey) else { return }
        settle(message)
    }
}
