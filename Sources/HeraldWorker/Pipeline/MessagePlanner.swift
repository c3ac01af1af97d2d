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
///    whoever subscribes (``PlanningRules``, which decides without I/O); any render error → the
///    whole message to the dead-letter queue before anything is sent; no recipient → acknowledged.
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
    private func subscriptions(of candidates: [PlanCandidate]) async -> UserSubscriptions? {
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
        var candidates: [PlanCandidate] = []
        candidates.reserveCapacity(chunk.count)
        for message in chunk {
            let messageKey = IncomingMessage.messageKey(message.delivery)
            switch EventAdmission.admit(message.delivery, decoded: message.decoded, decoder: configuration.decoder, catalog: catalog) {
            case .admitted(let event, let metadata):
                candidates.append(PlanCandidate(message: message, event: event, metadata: metadata, messageKey: messageKey))
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

        // 4: select and render (``PlanningRules``), then carry out each verdict.
        let rules = PlanningRules(selector: RecipientSelector(policy: configuration.selectionPolicy), catalog: catalog)
        var planned: [PlannedMessage] = []
        planned.reserveCapacity(candidates.count)
        for candidate in candidates {
            let verdict: PlanVerdict
            if candidate.needsEveryone, inWindows != nil {
                verdict = rules.checkForWindows(candidate)
            } else {
                let pool = candidate.needsEveryone ? ArraySlice(everyone?.candidates(for: candidate.event) ?? []) : byUser.of(candidate.users)
                verdict = rules.plan(candidate, from: pool)
            }
            switch verdict {
            case .planned(let message):
                planned.append(message)
            case .noRecipients:
                metrics.noRecipients()
                settle(candidate.message)
            case .refused(let code, let reason):
                await deadLetter(candidate.message, code, reason, eventId: candidate.event.id, messageKey: candidate.messageKey)
            case .inWindows:
                await inWindows?.begin(candidate.message, event: candidate.event, metadata: candidate.metadata, key: candidate.key)
            }
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
