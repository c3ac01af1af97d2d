import HeraldAMQP
import HeraldCore
import HeraldStore

/// A decoded message of known event, waiting for its recipients.
struct PlanCandidate {
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

    /// Its journal key (a partition copy's names the partition).
    var key: MessageKey { MessageKey(text: messageKey, partitionSuffix: message.slice?.journalSuffix ?? "") }
}

/// What becomes of one candidate (``PlanningRules``).
enum PlanVerdict {
    /// Deliveries to claim.
    case planned(PlannedMessage)
    /// Nobody to deliver to: acknowledged.
    case noRecipients
    /// Refused before anything is sent: to the dead-letter queue with this code and reason.
    case refused(DeadLetterCode, String)
    /// A broadcast whose audience does not fit in memory, checked: sent in windows.
    case inWindows
}

/// The planner's decisions about one message, with no I/O: the recipients it selects from the
/// subscriptions it is given, the texts it renders for them, and why it refuses one. The
/// ``MessagePlanner`` reads the subscriptions and carries the verdicts out.
struct PlanningRules {
    let selector: RecipientSelector
    let catalog: TemplateCatalog

    /// A broadcast to send in windows: checked as ``plan(_:from:)`` checks one in memory, before
    /// it is acknowledged.
    func checkForWindows(_ candidate: PlanCandidate) -> PlanVerdict {
        do throws(RecipientSelectionError) {
            try selector.validate(candidate.event)
        } catch {
            return .refused(.noAddressee, error.description)
        }
        do throws(TemplateError) {
            try catalog.validateInDefaultCulture(candidate.event)
        } catch {
            return .refused(DeadLetterCode.forTemplateError(error), error.description)
        }
        return .inWindows
    }

    /// Selects `candidate`'s recipients from `pool` and renders every (culture, platform) they
    /// need, plus the default culture, so that a bad message is refused whoever subscribes.
    func plan(_ candidate: PlanCandidate, from pool: ArraySlice<Subscription>) -> PlanVerdict {
        let event = candidate.event
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
            return .refused(.noAddressee, error.description)
        }
        let rendered: [RenderedNotification]
        do throws(TemplateError) {
            rendered = try render(event, for: recipients)
        } catch {
            return .refused(DeadLetterCode.forTemplateError(error), error.description)
        }
        if recipients.isEmpty { return .noRecipients }
        let delivery = candidate.message.delivery
        let mayBeKnown =
            delivery.redelivered || delivery.properties.headers[DeadLetterHeaders.replayed] != nil
            || delivery.properties.headers[DeferredCopy.countHeader] != nil
        return .planned(
            PlannedMessage(
                message: candidate.message, event: event, metadata: candidate.metadata, key: candidate.key,
                dropsRepeats: IncomingMessage.avoidsDuplication(delivery) && !mayBeKnown, mayBeKnown: mayBeKnown,
                publishedAt: IncomingMessage.publishedAt(delivery), recipients: recipients, rendered: rendered
            ))
    }

    /// The text of each recipient, rendered per (culture, platform), looked up by the
    /// subscription's exact culture string first (one culture per event is the common case).
    private func render(_ event: Event, for recipients: [Recipient]) throws(TemplateError) -> [RenderedNotification] {
        var rendered: [RenderedNotification] = []
        rendered.reserveCapacity(recipients.count)
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
        return rendered
    }
}
