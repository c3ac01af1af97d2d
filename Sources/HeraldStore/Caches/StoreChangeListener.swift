import HeraldCore
import HeraldPostgres
import Logging
import Metrics
import Synchronization

/// Feeds the caches from PostgreSQL notifications: `herald_devices` invalidates users in the
/// ``SubscriptionCache``, `herald_templates` reloads the ``TemplateCache``.
///
/// NOTIFY is not queued for absent listeners, so a lost connection is handled as "anything may
/// have changed": the subscription cache stops keeping entries while the listener is
/// disconnected and is emptied when it reconnects; the templates are reloaded after a
/// reconnect. Each channel has its own LISTEN connection and thread (HeraldPostgres listens on
/// one channel per connection). Template reloads are coalesced (one more after the current
/// one, however many notifications arrive meanwhile) and retried with backoff while the
/// database is unreachable.
///
/// Every notification applied to the subscription cache counts in
/// `herald_subscription_changes_total`: how often subscriptions change, and (compared with the
/// database's notifications) when a process has seen a change.
///
/// Run it with ``run()`` (``Store/start()`` does); it returns when its task is cancelled.
public final class StoreChangeListener: Sendable {
    private let client: PostgresClient
    private let templates: TemplateCache
    private let subscriptions: SubscriptionCache
    private let logger: Logger
    private let connected = Mutex((devices: false, templates: false))
    private let changesApplied = Counter(label: "herald_subscription_changes_total")

    public init(client: PostgresClient, templates: TemplateCache, subscriptions: SubscriptionCache, logger: Logger) {
        self.client = client
        self.templates = templates
        self.subscriptions = subscriptions
        self.logger = logger
    }

    /// Whether both channels are being listened to right now.
    public var isListening: Bool {
        connected.withLock { $0.devices && $0.templates }
    }

    /// Listens until the calling task is cancelled.
    public func run() async {
        let (reloads, requestReload) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in self.client.listen(channel: StoreChannel.devices) {
                    self.handleDevices(event)
                }
            }
            group.addTask {
                for await event in self.client.listen(channel: StoreChannel.templates) {
                    self.handleTemplates(event, requestReload: requestReload)
                }
                requestReload.finish()
            }
            group.addTask {
                for await _ in reloads {
                    await self.reloadTemplates()
                }
            }
        }
        connected.withLock { $0 = (false, false) }
        subscriptions.setLive(false)
    }

    private func handleDevices(_ event: PostgresNotificationEvent) {
        switch event {
        case .listening, .reconnected:
            subscriptions.setLive(true)
            connected.withLock { $0.devices = true }
            logger.debug("Listening for device changes", metadata: ["herald.pg.channel": "\(StoreChannel.devices)"])
        case .disconnected(let error):
            connected.withLock { $0.devices = false }
            subscriptions.setLive(false)
            logger.warning("Device change listener disconnected; the subscription cache is bypassed", metadata: [LogKey.error: "\(error)"])
        case .notification(let notification):
            if notification.payload == StoreChannel.everyone {
                subscriptions.invalidateAll()
            } else {
                subscriptions.invalidate(userId: notification.payload)
            }
            changesApplied.increment()
        }
    }

    private func handleTemplates(_ event: PostgresNotificationEvent, requestReload: AsyncStream<Void>.Continuation) {
        switch event {
        case .listening, .reconnected:
            connected.withLock { $0.templates = true }
            requestReload.yield()
        case .disconnected(let error):
            connected.withLock { $0.templates = false }
            logger.warning("Template change listener disconnected; serving the cached templates", metadata: [LogKey.error: "\(error)"])
        case .notification:
            requestReload.yield()
        }
    }

    /// Reloads, retrying with backoff (100 ms doubling to 5 s) until it works or the task is
    /// cancelled.
    private func reloadTemplates() async {
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                try await templates.reload()
                return
            } catch {
                logger.warning("Template reload failed; retrying", metadata: [LogKey.error: "\(error)", LogKey.retryIn: "\(delay)"])
            }
            do { try await Task.sleep(for: delay) } catch { return }
            delay = min(delay * 2, .seconds(5))
        }
    }
}
