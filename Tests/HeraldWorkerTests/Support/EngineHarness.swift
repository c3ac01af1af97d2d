import Foundation
import HeraldCore
import HeraldDelivery
import HeraldStore
import Logging

@testable import HeraldWorker

/// Drives an ``EngineCore`` turn by turn with a clock of its own, in process: what the engine
/// decides is read from the ``EngineActions`` it returns, and the world's answers (the sender's,
/// the journal's, the backlog's) are events the test posts.
struct EngineHarness {
    var core: EngineCore
    private(set) var clock = ContinuousClock.now
    /// Deliveries no live message waits for any more (their connection was lost).
    let orphans = OrphanSet()

    /// Everything the turns decided so far, in order.
    private(set) var sent: [Delivery] = []
    private(set) var rows: [DeliveryRecord] = []
    private(set) var settlements: [EngineActions.Settlement] = []
    private(set) var last = EngineActions()
    /// Journal writes started and not yet answered.
    private var writes: [RecordBatch] = []

    static func settings(
        lanes: Int = 8, policy: RetryPolicy = RetryPolicy(initialDelay: .seconds(1), jitter: 0, maxAttempts: 3),
        breaker: CircuitBreaker.Policy = .disabled, backlogAfter: Int = 1_000, recordLinger: Duration = .zero, partitions: Int = 0
    ) -> EngineCore.Settings {
        EngineCore.Settings(
            lanes: lanes, policy: policy, builder: PayloadBuilder(profile: .legacy), recordBatchSize: 100, recordConcurrency: 2,
            recordLinger: recordLinger, recordLingerBelow: 50, circuitBreaker: breaker, backlogAfter: backlogAfter, backlogWindow: 64,
            backlogMemory: 10_000, partitions: partitions)
    }

    init(_ settings: EngineCore.Settings = EngineHarness.settings()) {
        let orphans = self.orphans
        core = EngineCore(
            settings: settings, deadTokens: DeadTokenRegistry(capacity: 100), metrics: WorkerMetrics(), logger: Logger(label: "test"),
            areAwaited: { deliveries in deliveries.map { !orphans.contains($0) } })
    }

    /// One turn at the harness's clock; its actions are kept in ``last`` and added to the totals.
    @discardableResult
    mutating func turn(_ events: [EngineEvent] = [.wake], stopping: Bool = false, finished: Bool = false) -> EngineActions {
        let actions = core.turn(events, EngineCore.Turn(now: Date(), clock: clock, stopping: stopping, finished: finished))
        sent += actions.sends
        rows += actions.recordWrites.flatMap(\.rows)
        settlements += actions.settlements
        writes += actions.recordWrites
        last = actions
        return actions
    }

    mutating func advance(by duration: Duration) { clock += duration }

    /// The sender's answer `outcome` for each of these deliveries, in one turn.
    @discardableResult
    mutating func answer(_ deliveries: [Delivery], _ outcome: DeliveryOutcome, stopping: Bool = false) -> EngineActions {
        turn(deliveries.map { .outcome($0, outcome, answerTime: .milliseconds(30)) }, stopping: stopping)
    }

    /// Every journal write started so far ends durably (the messages' acknowledgement is the
    /// executor's), in one turn.
    @discardableResult
    mutating func recordsDurable(stopping: Bool = false, finished: Bool = false) -> EngineActions {
        let ended = writes
        writes.removeAll()
        return turn(ended.map { .recorded($0.settledDeliveries, true) } + [.wake], stopping: stopping, finished: finished)
    }

    /// The deliveries the journal settled with `.finish` so far.
    var finished: [Delivery] {
        settlements.flatMap { settlement -> [Delivery] in
            if case .finish(let deliveries) = settlement { return deliveries }
            return []
        }
    }

    var dropped: [Delivery] {
        settlements.flatMap { settlement -> [Delivery] in
            if case .drop(let deliveries) = settlement { return deliveries }
            return []
        }
    }

    var deferred: [Delivery] {
        settlements.flatMap { settlement -> [Delivery] in
            if case .deferred(let deliveries, _) = settlement { return deliveries }
            return []
        }
    }

    /// The rows written for `delivery`, in order.
    func rows(of delivery: Delivery) -> [DeliveryRecord] {
        rows.filter { $0.deviceRef == delivery.deviceRef && $0.position == delivery.position }
    }

    /// A delivery for `user` on `platform`, at `position` of its device (a device per user and
    /// platform).
    static func delivery(
        _ user: String, _ position: Int64, platform: Platform = .ios, inDoubt: Bool = false, attempts: Int = 0, hasPendingRow: Bool = false
    ) -> Delivery {
        let event = Event(id: "E\(position)", type: .message, dateTime: EventTimestamp(date: Date()), filters: [], params: [])
        let context = MessageContext(
            event: event, metadata: .defaults(for: "E"), key: MessageKey(text: "m-\(user)-\(position)"), journalId: position, publishedAt: nil)
        let deviceRef = Int64(abs(user.hashValue % 1_000_000)) * 2 + (platform == .ios ? 0 : 1)
        let subscription = Subscription(
            deviceId: "d-\(user)-\(platform)", token: "token-\(user)-\(platform)", platform: platform, userId: user, culture: "ru-RU",
            deviceRef: deviceRef)
        let rendered = RenderedNotification(
            eventId: event.id, culture: "ru-RU", platform: platform, title: "", body: "body \(position)", metadata: .defaults(for: "E"),
            isSilent: false)
        return Delivery(
            context: context, recipient: Recipient(subscription: subscription, addressedUserId: user), rendered: rendered,
            deviceRef: deviceRef, position: position, inDoubt: inDoubt, attempts: attempts, hasPendingRow: hasPendingRow)
    }

    /// A delivery read back from `user`'s backlog at `seq`: its journal row is the queued one.
    static func queued(_ user: String, _ seq: Int64, inDoubt: Bool = false) -> Delivery {
        let delivery = Self.delivery(user, seq, inDoubt: inDoubt, hasPendingRow: true)
        delivery.backlogPlace = BacklogPlace(orderKey: UserBacklogs.text(OrderingKey(userId: user, platform: .ios)), seq: seq)
        return delivery
    }
}

/// The deliveries a test has orphaned (``MessageTracker/areAwaited(_:)`` answers false for them).
final class OrphanSet {
    private var identifiers: Set<ObjectIdentifier> = []
    func insert(_ delivery: Delivery) { identifiers.insert(ObjectIdentifier(delivery)) }
    func contains(_ delivery: Delivery) -> Bool { identifiers.contains(ObjectIdentifier(delivery)) }
}
