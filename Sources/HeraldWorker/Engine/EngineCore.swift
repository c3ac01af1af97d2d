import Foundation
import HeraldCore
import HeraldStore
import Logging

/// The delivery engine's rules, as a state machine with no I/O: each turn takes the events posted
/// since the last one (``EngineEvent``) and returns what to do (``EngineActions``), which the
/// ``DeliveryEngine`` carries out. It never sends, writes, reads or acknowledges: beside its own
/// state it only asks the ``MessageTracker`` whether messages still wait for deliveries, notes
/// dead tokens in memory (``DeadTokenRegistry``), counts and logs. So every rule below runs in a
/// unit test with no broker, database or provider.
///
/// Order and lanes (``HeraldCore/PerUserScheduler``): a user's next delivery is released only
/// when the previous one is terminal. A delivery the provider asks to retry is *parked*: its
/// user's later deliveries keep waiting (order), but its lane serves other users until the
/// retry is due; then it goes before anyone waiting.
///
/// Records: a terminal outcome frees the lane at once (order at the provider is kept: the next
/// delivery starts after this one was answered) and queues its journal row; rows go out in
/// batches (at most ``Settings/recordConcurrency`` writes at a time, up to
/// ``Settings/recordBatchSize`` rows each; a few wait up to ``Settings/recordLinger`` for more),
/// and a message is acknowledged only once its rows are durable. A retried delivery's attempt
/// count and position are recorded as a `.pending` row, so a restart resumes them.
///
/// The backlog (``UserBacklogs``): a busy user's further deliveries are queued in PostgreSQL
/// instead of memory, their messages settled once the rows are durable, and they come back in
/// order, a window at a time, when the user's lane is free.
///
/// Provider outages (``ProviderGates``, one ``HeraldCore/CircuitBreaker`` per platform and
/// app): while a provider's breaker is open, its deliveries are *deferred* instead of sent or
/// parked: queued in their users' backlog (or, without it, a `.deferred` row and their message
/// republished to the wait queue), their lanes go on, and the other provider's deliveries keep
/// flowing. Half-open, one delivery goes as the probe; the others are held until it answers
/// (sent if it succeeded, deferred if not).
///
/// In doubt: a delivery whose outcome the journal did not have when its message came again is
/// looked up before it is sent again (``EngineActions/reconcile``).
///
/// Stopping: nothing more is released or retried; what was sent finishes and is recorded;
/// waiting and parked deliveries are dropped (their messages come again; a parked one's attempts
/// are recorded).
struct EngineCore {
    struct Settings: Sendable {
        var lanes: Int
        var policy: RetryPolicy
        var builder: PayloadBuilder
        var recordBatchSize: Int
        var recordConcurrency: Int
        var recordLinger: Duration
        var recordLingerBelow: Int
        var circuitBreaker: CircuitBreaker.Policy
        /// ``UserBacklogs/memoryAllowance`` and ``UserBacklogs/windowSize``.
        var backlogAfter: Int
        var backlogWindow: Int
        var backlogMemory: Int
        /// `worker.partitions`: the backlog's scopes (``UserBacklogs/scope(of:)``).
        var partitions = 0
    }

    /// What the world is at the start of a turn: read once, so that a turn decides on one view.
    struct Turn {
        /// The wall clock (publish→sent latency).
        var now: Date
        /// The monotonic clock (retries, the breaker, lingering records).
        var clock: ContinuousClock.Instant
        /// The worker is stopping (``StopSignal/isStopping``).
        var stopping: Bool
        /// No more deliveries will come (``DeliveryEngine/finish()``): records no longer linger.
        var finished: Bool
    }

    let settings: Settings
    let deadTokens: DeadTokenRegistry
    let metrics: WorkerMetrics
    let logger: Logger
    /// Whether a live message still waits for each delivery (``MessageTracker/areAwaited(_:)``).
    let areAwaited: ([Delivery]) -> [Bool]

    var scheduler: Lanes
    var parked = ParkedDeliveries()
    var records = RecordBatch()
    var recordsInFlight = 0
    var readyToSend: [Delivery] = []
    var gates: ProviderGates
    /// Parked or held deliveries changed: report the waiting gauge at the end of the turn.
    var waitingChanged = false
    /// Releases freed while sending (a delivery that failed before it was sent): next turn.
    var carried: [Lanes.Release] = []
    /// When the queued records are written even if few (``lingers()``).
    var recordsDue: ContinuousClock.Instant?
    /// The wake-up last asked for (``EngineActions/wakeAt``).
    var timerDue: ContinuousClock.Instant?
    /// Terminal outcomes of this turn, counted into the metrics at its end.
    var outcomes = WorkerMetrics.Outcomes()
    var turn: Turn

    var backlog: UserBacklogs
    /// Deliveries queued in the backlog whose write has not begun.
    var backlogWrites: [Delivery] = []
    var backlogWriting = false
    /// Users whose backlog may have deliveries for the lanes or need a read: looked at once per turn.
    var backlogTouched: Set<OrderingKey> = []
    /// New deliveries of users with queued ones, while the lock is away (``UserBacklogs/holdsBack(_:)``).
    var heldBack: [Delivery] = []

    /// Deliveries sent (or being looked up) and not yet answered, terminal outcomes and backlog
    /// rows not yet durable: what a stop waits for.
    var running = 0
    /// What the current turn decided.
    var actions = EngineActions()

    init(
        settings: Settings, deadTokens: DeadTokenRegistry, metrics: WorkerMetrics, logger: Logger,
        areAwaited: @escaping ([Delivery]) -> [Bool]
    ) {
        self.settings = settings
        self.deadTokens = deadTokens
        self.metrics = metrics
        self.logger = logger
        self.areAwaited = areAwaited
        scheduler = PerUserScheduler(lanes: settings.lanes)
        gates = ProviderGates(policy: settings.circuitBreaker)
        backlog = UserBacklogs(
            memoryAllowance: settings.backlogAfter, windowSize: settings.backlogWindow, memoryBudget: settings.backlogMemory,
            partitions: settings.partitions)
        turn = Turn(now: Date(), clock: .now, stopping: false, finished: false)
    }

    /// After ``Turn/finished``: nothing is running and nothing is left to record.
    var isIdle: Bool { running == 0 && recordsInFlight == 0 && records.isEmpty }

    /// One turn: the events in the order posted, then what the lanes, the backlog and the due
    /// retries release, sent as one batch; then the record and backlog writes and the next wake-up.
    mutating func turn(_ events: [EngineEvent], _ turn: Turn) -> EngineActions {
        self.turn = turn
        var released = carried
        carried.removeAll()
        for event in events { handle(event, released: &released) }
        if turn.stopping { stopWork(released: &released) }
        feedFromBacklog(released: &released)
        dueRetries(released: &released)
        dispatch(released)
        if waitingChanged { reportWaiting() }
        if !outcomes.isEmpty {
            metrics.record(outcomes)
            outcomes = WorkerMetrics.Outcomes()
        }
        writeRecords()
        writeBacklog()
        if backlog.isLeaving { actions.leftScopes = backlog.takeLeftScopes() }
        armTimer()
        defer { actions = EngineActions() }
        return actions
    }

    // MARK: Events

    private mutating func handle(_ event: EngineEvent, released: inout [Lanes.Release]) {
        switch event {
        case .fanOut(let deliveries):
            for delivery in deliveries {
                let user = delivery.recipient.orderingKey
                if backlog.holdsBack(user) {
                    // Its user's queued deliveries go first, once the lock is back.
                    heldBack.append(delivery)
                } else if backlog.takes(user, waiting: scheduler.waitingCount(user: user)), !turn.stopping,
                    !(delivery.wasClaimedBefore && backlog.has(user))
                {
                    // (A delivery claimed before, its message come again after a crash, is
                    // older than its user's queued ones: it goes to the lanes, ahead of them.)
                    queueInBacklog(delivery, user: user)
                } else {
                    scheduler.enqueue(delivery, user: user, isBulk: delivery.recipient.isBroadcast, into: &released)
                }
            }
            actions.fannedOut = true
        case .outcome(let delivery, let outcome, let answerTime):
            running -= 1
            handleOutcome(delivery, outcome, answerTime: answerTime, released: &released)
        case .reconciled(let delivery, let answer):
            running -= 1
            delivery.inDoubt = false
            switch answer {
            case .send:
                readyToSend.append(delivery)
            case .delivered:
                terminal(delivery, .sent, released: &released)
            case .recorded(let recordedState):
                // Another copy recorded it meanwhile: nothing to write, only to finish.
                complete(delivery, released: &released)
                metrics.skipped()
                logger.debug("In-doubt delivery found recorded", metadata: delivery.logMetadata([LogKey.state: "\(recordedState)"]))
                actions.settlements.append(.finish([delivery]))
            }
        case .recorded(let settled, let durable):
            recordsInFlight -= 1
            running -= settled.count
            for delivery in settled where delivery.backlogPlace != nil { backlog.recordDone(for: delivery.recipient.orderingKey) }
            // Aborted before the outcome was stored: the message must not be acknowledged.
            if !durable { actions.settlements.append(.drop(settled)) }
        case .backlogWritten(let deliveries, let durable):
            backlogWritten(deliveries, durable: durable)
        case .backlogRead(let user, let deliveries, let upTo):
            if let deliveries {
                backlog.read(for: user, deliveries, upTo: upTo)
            } else {
                backlog.readFailed(for: user)
            }
            backlogTouched.insert(user)
        case .backlogAcquired(let scope, let queued):
            backlog.acquired(queued, scope: scope)
            queueHeldBack(scope)
            backlogTouched.formUnion(queued.map(\.user))
            logger.info("Holding the backlog", metadata: backlogMetadata(scope, count: queued.count))
        case .backlogResumed(let scope):
            backlog.resume(scope: scope)
            queueHeldBack(scope)
            backlogTouched.formUnion(backlog.users)
            logger.notice("Holding the backlog again", metadata: backlogMetadata(scope, count: backlog.count))
        case .backlogLost(let scope):
            backlog.suspend(scope: scope)
            logger.warning(
                "Lost the backlog lock; the new deliveries of users with queued ones wait until it is back",
                metadata: backlogMetadata(scope, count: backlog.count))
        case .backlogLeaving(let scope):
            backlogLeaving(scope, released: &released)
        case .backlogGone(let scope):
            backlog.forget(scope: scope)
            for delivery in takeHeldBack(scope: scope) {
                scheduler.enqueue(delivery, user: delivery.recipient.orderingKey, isBulk: delivery.recipient.isBroadcast, into: &released)
            }
            logger.notice("Another worker holds the backlog; it sends the queued deliveries", metadata: backlogMetadata(scope, count: nil))
        case .wake:
            break
        }
    }

    /// Stopping: nothing more is sent; deliveries waiting for a lane or a retry are dropped.
    private mutating func stopWork(released: inout [Lanes.Release]) {
        let dropped = released.map(\.item) + readyToSend + parked.removeAll() + gates.releaseAllHeld() + heldBack
        released.removeAll()
        readyToSend.removeAll()
        heldBack.removeAll()
        if !backlogWrites.isEmpty {
            running -= backlogWrites.count
            abandonBacklogWrites(backlogWrites)
            backlogWrites.removeAll()
        }
        guard !dropped.isEmpty else { return }
        for delivery in dropped { delivery.ticket = nil }
        actions.settlements.append(.drop(dropped))
    }

    /// Asks for a wake-up when the earliest retry or lingering record is due.
    private mutating func armTimer() {
        if let armed = timerDue, armed <= turn.clock { timerDue = nil }
        var earliest = parked.earliest
        if let records = recordsDue, earliest.map({ records < $0 }) ?? true { earliest = records }
        guard let due = earliest, !turn.stopping else { return }
        if let armed = timerDue, armed <= due { return }
        timerDue = due
        actions.wakeAt = due
    }
}

extension Delivery {
    /// This delivery's fields for a log line, with `extra`.
    func logMetadata(_ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            LogKey.eventId: "\(context.event.id)",
            LogKey.userId: "\(recipient.addressedUserId)",
            LogKey.deviceId: "\(recipient.subscription.deviceId)",
            LogKey.platform: "\(recipient.subscription.platform)",
            LogKey.token: "\(LogKey.shortToken(recipient.subscription.token))",
            LogKey.deliveryKey: "\(key)",
            LogKey.messageKey: "\(context.key.text)",
        ]
        metadata.merge(extra) { _, new in new }
        return metadata
    }
}
