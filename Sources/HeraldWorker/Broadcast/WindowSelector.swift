import HeraldCore
import Logging

/// Selects and renders one window of a broadcast's devices: the recipient selector's rules (a
/// device once, through its first matching subscription in user order), the partition copy's
/// slice, and one render per (culture, platform) for the whole broadcast.
struct WindowSelector {
    private struct RenderKey: Hashable {
        let culture: String
        let platform: Platform
    }

    private let event: Event
    private let tag: String?
    private let slice: PartitionSlice?
    private let selector: RecipientSelector
    private let logger: Logger
    /// nil: nothing renders for this platform (logged once).
    private var renders: [RenderKey: RenderedNotification?] = [:]

    init(event: Event, tag: String?, slice: PartitionSlice?, policy: SelectionPolicy, logger: Logger) {
        self.event = event
        self.tag = tag
        self.slice = slice
        self.selector = RecipientSelector(policy: policy)
        self.logger = logger
    }

    /// The recipients among `subscriptions` (whole devices, ordered by device then user), each
    /// with its rendered text. A culture whose template cannot take the event's parameters gets
    /// the default culture's text (checked before the broadcast began), said once per culture.
    mutating func select(_ subscriptions: [Subscription], catalog: TemplateCatalog) -> (recipients: [Recipient], rendered: [RenderedNotification]) {
        var recipients = (try? selector.select(event, tag: tag, from: subscriptions)) ?? []
        if let slice { recipients.removeAll { !slice.contains(user: $0.subscription.userId) } }
        var rendered: [RenderedNotification] = []
        rendered.reserveCapacity(recipients.count)
        var kept: [Recipient] = []
        kept.reserveCapacity(recipients.count)
        for recipient in recipients {
            let key = RenderKey(culture: recipient.subscription.culture, platform: recipient.subscription.platform)
            if let hit = renders[key] {
                guard let hit else { continue }
                rendered.append(hit)
                kept.append(recipient)
                continue
            }
            var text: RenderedNotification?
            do {
                text = try catalog.render(event, culture: key.culture, platform: key.platform)
            } catch {
                text = try? catalog.render(event, culture: catalog.defaultCulture, platform: key.platform)
                logger.error(
                    text == nil
                        ? "No template renders this broadcast for a platform; its devices are not sent it"
                        : "A culture's template cannot be rendered for this broadcast; its devices get the default culture's text",
                    metadata: [LogKey.eventId: "\(event.id)", LogKey.platform: "\(key.platform)", LogKey.error: "\(error)"])
            }
            renders[key] = text
            guard let text else { continue }
            rendered.append(text)
            kept.append(recipient)
        }
        return (kept, rendered)
    }
}
