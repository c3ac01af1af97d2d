import Foundation
import HeraldCore
import HeraldDelivery
import HeraldStore
import Logging
import Synchronization

/// Where claimed deliveries become outcomes: the per-user lanes, the sender, retries, the
/// journal records and the acknowledgements, run by ONE task as a state machine fed by its
/// ``EngineMailbox``.
///
/// One turn of the loop takes every posted event (deliveries from the claim stage, the
/// senders' answers, finished record writes, due retries), updates the lanes, then sends
/// everything the lanes released as one ``HeraldDelivery/PushSender/submit(_:timed:)``
/// call, and hands the outcomes gathered meanwhile to a record write (at most
/// ``WorkerConfiguration/recordConcurrency`` in flight, up to
/// ``WorkerConfiguration/recordBatchSize`` rows each; a few wait up to
/// ``WorkerConfiguration/recordLinger`` for more). No task, actor hop or lock per delivery:
/// the costs are per turn, and a turn takes what arrived while the previous one ran.
///
/// Order and lanes (``HeraldCore/PerUserScheduler``): a user's next delivery is released only
/// when the previous one is terminal. A delivery the provider asks to retry is *parked*: its
/// user's later deliveries keep waiting (order), but its lane serves other users until the
/// retry is due; then it goes before anyone waiting.
///
/// Records and acknowledgements: a terminal outcome frees the lane at once (order at the
/// provider is kept: the next delivery starts after this one was answered), and the message is
/// acknowledged only once the record is durable (``MessageTracker``). A retried delivery's
/// attempt count and position are recorded as a `.pending` row, so a restart resumes them.
///
/// Provider outages (``ProviderGates``, one ``HeraldCore/CircuitBreaker`` per platform and
/// app): while a provider's breaker is open, its deliveries are *deferred* instead of sent or
/// parked: queued in their users' backlog (or, without it, a `.deferred` row and their message
/// republished to the wait queue, ``DeferredCopy``), their lanes go on, and the other
/// provider's deliveries keep flowing. Half-open, one delivery goes as the probe; the others are
/// parked until it answers (sent if it succeeded, deferred if not).
///
/// Stopping: once ``StopSignal/isStopping``, nothing more is released or retried; what was
/// sent finishes and is recorded (a graceful stop waits for that, bounded by the worker);
/// waiting and parked deliveries are dropped (their messages are requeued by the broker; a
/// parked one's attempts are recorded). Once aborted, record writes give up too.
final class DeliveryEngine: Sendable {
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

    let mailbox = EngineMailbox()
    private let settings: Settings
    private let sender: any PushSender
    private let journal: DeliveryJournal
    /// The per-user backlog, when this worker may hold it (``UserBacklogs``).
    private let backlog: DeliveryBacklog?
    private let tracker: MessageTracker
    private let deadTokens: DeadTokenRegistry
    private let acknowledger: Acknowledger
    private let deferredCopy: DeferredCopy
    private let metrics: WorkerMetrics
    private let retry: StoreRetry
    private let stop: StopSignal
    private let logger: Logger
    /// Deliveries sent (or being reconciled) and not yet answered, plus terminal outcomes not
    /// yet durable: what a stop waits for.
    private let busy = Atomic<Int>(0)
    private let finished = Atomic<Bool>(false)
    /// Scopes being left whose backlog has nothing in the lanes here any more (``hasLeft(scope:)``).
    private let left = Mutex<Set<Int>>([])

    init(
        settings: Settings, sender: any PushSender, journal: DeliveryJournal, backlog: DeliveryBacklog?, tracker: MessageTracker,
        deadTokens: DeadTokenRegistry, acknowledger: Acknowledger, deferredCopy: DeferredCopy, metrics: WorkerMetrics, retry: StoreRetry,
        stop: StopSignal, logger: Logger
    ) {
        self.backlog = backlog
        self.deferredCopy = deferredCopy
        self.settings = settings
        self.sender = sender
        self.journal = journal
        self.tracker = tracker
        self.deadTokens = deadTokens
        self.acknowledger = acknowledger
        self.metrics = metrics
        self.retry = retry
        self.stop = stop
        self.logger = logger
    }

    /// Deliveries being sent or recorded right now.
    var running: Int { busy.load(ordering: .relaxed) }

    /// Claimed deliveries, in order.
    func enqueue(_ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
        mailbox.post(.fanOut(deliveries))
    }

    /// Wakes the loop (a stop began, or ``finish()`` was called).
    func wake() { mailbox.post(.wake) }

    /// This worker holds `scope`'s backlog now (``HeraldStore/BacklogLock``, or its partition's
    /// lock): these users have deliveries queued, up to these places.
    func backlogAcquired(_ queued: [(user: OrderingKey, lastSeq: Int64)], scope: Int = 0) {
        left.withLock { _ = $0.remove(scope) }
        mailbox.post(.backlogAcquired(scope, queued))
    }

    /// This worker lost the backlog's lock and may take it back (``BacklogKeeper``).
    func backlogLost(scope: Int = 0) { mailbox.post(.backlogLost(scope)) }

    /// This worker took the lock back and nobody held it meanwhile.
    func backlogResumed(scope: Int = 0) { mailbox.post(.backlogResumed(scope)) }

    /// `scope`'s partition is being handed over: nothing more of its backlog goes to the lanes,
    /// and its deliveries waiting there for a retry are dropped (the next owner sends them);
    /// ``hasLeft(scope:)`` once the rest there is answered.
    func backlogLeaving(scope: Int) { mailbox.post(.backlogLeaving(scope)) }

    /// Whether `scope`'s backlog, being left, has nothing in the lanes here any more.
    func hasLeft(scope: Int) -> Bool { left.withLock { $0.contains(scope) } }

    /// Another worker holds `scope`'s backlog now (or will).
    func backlogGone(scope: Int = 0) { mailbox.post(.backlogGone(scope)) }

    /// No more deliveries will come: ``run()`` returns once what runs is recorded (or at once
    /// when aborted).
    func finish() {
        finished.store(true, ordering: .relaxed)
        mailbox.post(.wake)
    }

    /// The loop; returns after ``finish()`` once nothing is running, or when aborted.
    func run() async {
        var state = LoopState(settings: settings)
        while true {
            // Nil only once its task is cancelled (the worker aborts).
            guard let events = await mailbox.take() else { break }
            state.now = Date()
            state.clock = ContinuousClock.now
            var released = state.carried
            state.carried.removeAll()
            for event in events { handle(event, state: &state, released: &released) }
            if stop.isStopping { stopWork(&state, released: &released) }
            feedFromBacklog(&state, released: &released)
            dueRetries(&state, released: &released)
            dispatch(released, state: &state)
            if state.waitingChanged { reportWaiting(&state) }
            if !state.outcomes.isEmpty {
                metrics.record(state.outcomes)
                state.outcomes = WorkerMetrics.Outcomes()
            }
            writeRecords(&state)
            writeBacklog(&state)
            if state.backlog.isLeaving { reportLeft(&state) }
            armTimer(&state)
            if stop.isAborted { break }
            if finished.load(ordering: .relaxed), busy.load(ordering: .relaxed) == 0, state.recordsInFlight == 0, state.records.isEmpty { break }
        }
        state.timer?.cancel()
    }

    // MARK: Events

    private func handle(_ event: EngineEvent, state: inout LoopState, released: inout [Lanes.Release]) {
        switch event {
        case .fanOut(let deliveries):
            for delivery in deliveries {
                let user = delivery.recipient.orderingKey
                if state.backlog.holdsBack(user) {
                    // Its user's queued deliveries go first, once the lock is back.
                    state.heldBack.append(delivery)
                } else if state.backlog.takes(user, waiting: state.scheduler.waitingCount(user: user)), !stop.isStopping,
                    !(delivery.wasClaimedBefore && state.backlog.has(user))
                {
                    // (A delivery claimed before, its message come again after a crash, is
                    // older than its user's queued ones: it goes to the lanes, ahead of them.)
                    queueInBacklog(delivery, user: user, state: &state)
                } else {
                    state.scheduler.enqueue(delivery, user: user, isBulk: delivery.recipient.isBroadcast, into: &released)
                }
            }
            metrics.inFlight(messages: tracker.messageCount, deliveries: tracker.deliveryCount)
        case .outcome(let delivery, let outcome, let answerTime):
            busy.subtract(1, ordering: .relaxed)
            handleOutcome(delivery, outcome, answerTime: answerTime, state: &state, released: &released)
        case .reconciled(let delivery, let answer):
            busy.subtract(1, ordering: .relaxed)
            delivery.inDoubt = false
            switch answer {
            case .send:
                state.readyToSend.append(delivery)
            case .delivered:
                terminal(delivery, .sent, state: &state, released: &released)
            case .recorded(let recordedState):
                // Another copy recorded it meanwhile: nothing to write, only to finish.
                complete(delivery, state: &state, released: &released)
                metrics.skipped()
                logger.debug("In-doubt delivery found recorded", metadata: metadata(delivery, [LogKey.state: "\(recordedState)"]))
                state.finishedWithoutRecord.append(delivery)
            }
        case .recorded(let settled, let durable):
            state.recordsInFlight -= 1
            busy.subtract(settled.count, ordering: .relaxed)
            for delivery in settled where delivery.backlogPlace != nil { state.backlog.recordDone(for: delivery.recipient.orderingKey) }
            if !durable {
                // Aborted before the outcome was stored: the message must not be acknowledged.
                tracker.drop(settled)
                metrics.abandoned(settled.count)
            }
        case .backlogWritten(let deliveries, let durable):
            backlogWritten(deliveries, durable: durable, state: &state)
        case .backlogRead(let user, let deliveries, let upTo):
            if let deliveries {
                state.backlog.read(for: user, deliveries, upTo: upTo)
            } else {
                state.backlog.readFailed(for: user)
            }
            state.backlogTouched.insert(user)
        case .backlogAcquired(let scope, let queued):
            state.backlog.acquired(queued, scope: scope)
            queueHeldBack(scope, &state)
            state.backlogTouched.formUnion(queued.map(\.user))
            logger.info("Holding the backlog", metadata: backlogMetadata(scope, count: queued.count))
        case .backlogResumed(let scope):
            state.backlog.resume(scope: scope)
            queueHeldBack(scope, &state)
            state.backlogTouched.formUnion(state.backlog.users)
            logger.notice("Holding the backlog again", metadata: backlogMetadata(scope, count: state.backlog.count))
        case .backlogLost(let scope):
            state.backlog.suspend(scope: scope)
            logger.warning(
                "Lost the backlog lock; the new deliveries of users with queued ones wait until it is back",
                metadata: backlogMetadata(scope, count: state.backlog.count))
        case .backlogLeaving(let scope):
            state.backlog.leave(scope: scope)
            // Waiting for a retry, they would hold the handover: the next owner sends them.
            let partitions = settings.partitions
            for delivery in state.parked.removeAll(where: {
                $0.backlogPlace != nil && UserBacklogs.scope(of: $0.recipient.orderingKey, partitions: partitions) == scope
            }) {
                delivery.retryDue = nil
                complete(delivery, state: &state, released: &released)
                state.waitingChanged = true
            }
        case .backlogGone(let scope):
            state.backlog.forget(scope: scope)
            for delivery in state.takeHeldBack(scope: scope) {
                state.scheduler.enqueue(delivery, user: delivery.recipient.orderingKey, isBulk: delivery.recipient.isBroadcast, into: &released)
            }
            logger.notice("Another worker holds the backlog; it sends the queued deliveries", metadata: backlogMetadata(scope, count: nil))
        case .wake:
            break
        }
        if !state.finishedWithoutRecord.isEmpty {
            settle(tracker.finish(state.finishedWithoutRecord))
            state.finishedWithoutRecord.removeAll()
        }
    }

    /// Settled messages: acknowledged, or first republished to the wait queue when some of their
    /// deliveries were deferred.
    /// (A broadcast's window goes to its runner either way: it sends its deferred deliveries again.)
    private func settle(_ messages: [TrackedMessage]) {
        guard messages.contains(where: { $0.deferredUntil != nil && $0.window == nil }) else {
            acknowledger.ack(messages)
            return
        }
        acknowledger.ack(messages.filter { $0.deferredUntil == nil || $0.window != nil })
        deferredCopy.republish(messages.filter { $0.deferredUntil != nil && $0.window == nil }, acknowledger: acknowledger)
    }

    private func handleOutcome(
        _ delivery: Delivery, _ outcome: DeliveryOutcome, answerTime: Duration?, state: inout LoopState, released: inout [Lanes.Release]
    ) {
        // Slow by the provider's own answer time, never by how long this loop took to get to it.
        let slow = state.gates.isSlow(answerTime: answerTime)
        if let sentAt = delivery.sentAt { state.outcomes.answered(delivery.recipient.subscription.platform, after: state.clock - sentAt) }
        // No breaker exists and the provider answered in time: nothing to count, nothing is blocked.
        if outcome.isProviderFault || slow || state.gates.isWatching {
            let provider = ProviderGates.Key(delivery.recipient)
            if let change = state.gates.record(outcome, slow: slow, for: provider, probe: delivery.isProbe, now: state.clock) {
                gateChanged(change, state: &state, released: &released)
            }
            delivery.isProbe = false
            if case .retryAfter(_, let reason, _) = outcome, state.gates.isBlocked(provider) {
                // Its provider is failing: wait in the broker, not here.
                deferDelivery(delivery, reason: reason, state: &state, released: &released)
                return
            }
        }
        switch outcome {
        case .sent, .permanentFailure:
            terminal(delivery, outcome, state: &state, released: &released)
        case .tokenDead(let reason):
            deadTokens.markDead(delivery.recipient.pushTarget)
            logger.info("Device token refused by the provider; device marked dead", metadata: metadata(delivery, [LogKey.error: "\(reason)"]))
            terminal(delivery, outcome, state: &state, released: &released)
        case .retryAfter(let after, let reason, let providerFault):
            let now = ContinuousClock.now
            let elapsed = now - (delivery.firstAttempt ?? now)
            switch settings.policy.decide(attempts: delivery.attempts, elapsed: elapsed, retryAfter: after, providerFault: providerFault) {
            case .giveUp(let why):
                let text = "\(reason); gave up after \(delivery.attempts) attempts (\(why.rawValue))"
                terminal(delivery, .permanentFailure(reason: text), state: &state, released: &released)
            case .retry(let delay):
                metrics.retried()
                logger.info(
                    "Delivery will be retried",
                    metadata: metadata(
                        delivery,
                        [
                            LogKey.error: "\(reason)", LogKey.attempts: "\(delivery.attempts)", LogKey.retryIn: "\(delay)",
                        ]))
                guard delivery.ticket != nil else { return }
                waitInMemory(delivery, until: now + delay, state: &state, released: &released)
                // Keep the attempt count and the position for whoever sends it next (a queued
                // delivery's row stays queued: its backlog row is what resumes it).
                if delivery.backlogPlace == nil { queueRecord(delivery, state: .pending, lastError: reason, into: &state) }
            }
        }
    }

    /// A terminal outcome: the lane goes on, the outcome is queued for the journal.
    private func terminal(
        _ delivery: Delivery, _ outcome: DeliveryOutcome, state: inout LoopState, released: inout [Lanes.Release]
    ) {
        complete(delivery, state: &state, released: &released)
        state.outcomes.add(outcome, publishedAt: delivery.context.publishedAt, now: state.now)
        switch outcome {
        case .sent:
            queueRecord(delivery, state: .sent, lastError: nil, into: &state)
        case .tokenDead(let reason):
            queueRecord(delivery, state: .tokenDead, lastError: reason, into: &state)
        case .permanentFailure(let reason), .retryAfter(_, let reason, _):
            if case .permanentFailure = outcome {
                logger.warning("Delivery failed", metadata: metadata(delivery, [LogKey.error: "\(reason)", LogKey.attempts: "\(delivery.attempts)"]))
            }
            queueRecord(delivery, state: .failed, lastError: reason, into: &state)
        }
        if delivery.backlogPlace != nil { state.backlog.recordQueued(for: delivery.recipient.orderingKey) }
        busy.add(1, ordering: .relaxed)  // until durable
    }

    private func complete(_ delivery: Delivery, state: inout LoopState, released: inout [Lanes.Release]) {
        guard let ticket = delivery.ticket else { return }
        delivery.ticket = nil
        if state.backlog.has(ticket.user) {
            if delivery.backlogPlace != nil { state.backlog.leftTheLanes(ticket.user) }
            state.backlogTouched.insert(ticket.user)
        }
        // A ticket completed twice would be a bug here; the scheduler refuses it without
        // corrupting the order, and nothing more can be done about it at run time.
        try? state.scheduler.complete(ticket, into: &released)
    }

    private func queueRecord(_ delivery: Delivery, state deliveryState: DeliveryState, lastError: String?, into state: inout LoopState) {
        let record = DeliveryRecord(
            deviceRef: delivery.deviceRef, position: delivery.position, messageId: delivery.context.journalId,
            userId: delivery.recipient.addressedUserId, state: deliveryState, attempts: delivery.attempts,
            lastError: lastError, payload: deliveryState == .sent ? delivery.payload?.loggedBody : nil,
            token: deliveryState == .tokenDead ? delivery.recipient.subscription.token : nil, completesPendingRow: delivery.hasPendingRow,
            backlogPlace: delivery.backlogPlace
        )
        if !deliveryState.isTerminal { delivery.hasPendingRow = true }
        // One row per delivery per statement: a later record replaces one still queued.
        if delivery.hasPendingRow, let index = state.records.deliveries.lastIndex(where: { $0 === delivery }) {
            if state.records.rows[index].state.settlesDelivery { busy.subtract(1, ordering: .relaxed) }
            state.records.rows[index] = record
            return
        }
        state.records.append(delivery, record)
    }

    // MARK: Provider outages

    /// A breaker opened (its parked and held deliveries are deferred) or closed (its held
    /// deliveries go).
    private func gateChanged(_ change: ProviderGates.Change, state: inout LoopState, released: inout [Lanes.Release]) {
        switch change {
        case .opened(let key, let reopensAt, let reason):
            metrics.circuit(provider: key.platform, app: key.app, state: .open(until: reopensAt))
            let parked = state.parked.removeAll { ProviderGates.Key($0.recipient) == key }
            let held = state.gates.releaseHeld(key)
            logger.warning(
                "Provider failing: circuit open, its deliveries wait",
                metadata: [
                    LogKey.platform: "\(key.platform)", LogKey.app: "\(key.app ?? "default")", LogKey.error: "\(reason)",
                    LogKey.retryIn: "\(reopensAt - ContinuousClock.now)", LogKey.count: "\(parked.count + held.count)",
                ])
            for delivery in parked + held {
                delivery.retryDue = nil
                deferDelivery(delivery, reason: reason, state: &state, released: &released)
            }
        case .closed(let key):
            metrics.circuit(provider: key.platform, app: key.app, state: .closed)
            logger.notice("Provider answers again: circuit closed", metadata: [LogKey.platform: "\(key.platform)", LogKey.app: "\(key.app ?? "default")"])
            for delivery in state.gates.releaseHeld(key) {
                guard let ticket = delivery.ticket, let resumed = try? state.scheduler.resume(ticket, item: delivery) else { continue }
                released += resumed
            }
        }
        state.waitingChanged = true
    }

    /// Its provider's breaker is open. While this worker holds the backlog, the delivery goes to
    /// its user's backlog with the user's deliveries waiting behind it, its lane goes on, and
    /// they go out in order once the breaker's probe succeeds. Otherwise (partitions, or a
    /// worker that does not hold the backlog) a `.deferred` row keeps its position and attempts,
    /// the lane goes on, and its message will be republished to the wait queue once settled.
    private func deferDelivery(_ delivery: Delivery, reason: String, state: inout LoopState, released: inout [Lanes.Release]) {
        let key = ProviderGates.Key(delivery.recipient)
        let until = state.gates.reopensAt(key) ?? ContinuousClock.now + settings.circuitBreaker.initialOpen
        let user = delivery.recipient.orderingKey
        if delivery.backlogPlace != nil || state.backlog.has(user) {
            // Queued already, or ahead of its user's queued ones (it waited in memory when they
            // were queued): it waits here, the user's later ones behind it, until the breaker
            // lets a probe through.
            waitInMemory(delivery, until: until, state: &state, released: &released)
            return
        }
        if stop.isStopping {
            // Like every delivery still waiting at a stop: dropped, its message comes again at
            // once (a copy in the wait queue would come back after its user's later ones).
            delivery.ticket = nil
            tracker.drop([delivery])
            metrics.abandoned(1)
            return
        }
        metrics.deferred(key.platform)
        if state.backlog.queues(user) {
            // Queued first, then the user's waiting ones behind it (before its lane frees them).
            let behind = state.scheduler.removeWaiting(user: user)
            complete(delivery, state: &state, released: &released)
            queue(delivery, in: user, state: &state)
            for later in behind { queue(later, in: user, state: &state) }
            return
        }
        complete(delivery, state: &state, released: &released)
        tracker.markDeferred([delivery], until: until)
        queueRecord(delivery, state: .deferred, lastError: "deferred, provider failing: \(reason)", into: &state)
        busy.add(1, ordering: .relaxed)  // until durable
    }

    /// Parks `delivery` until `due` (a retry, or a backlog delivery waiting for its breaker): its
    /// lane goes to others (if it held one; a held delivery is parked already), its user stays
    /// blocked.
    private func waitInMemory(_ delivery: Delivery, until due: ContinuousClock.Instant, state: inout LoopState, released: inout [Lanes.Release]) {
        if delivery.backlogPlace != nil, state.backlog.holding(delivery.recipient.orderingKey).map({ $0 == .leaving }) ?? true {
            // Its scope is handed over: the next holder sends it from its row.
            complete(delivery, state: &state, released: &released)
            return
        }
        if let ticket = delivery.ticket, let freed = try? state.scheduler.park(ticket) { released += freed }
        delivery.retryDue = due
        state.parked.insert(delivery, due: due)
        state.waitingChanged = true
    }

    /// The waiting gauge per provider: parked for a retry or held for a probe.
    private func reportWaiting(_ state: inout LoopState) {
        state.waitingChanged = false
        for platform in Platform.allCases {
            metrics.waiting(platform, state.parked.count(platform) + state.gates.heldCount(platform))
        }
    }

    // MARK: Retries and stopping

    private func dueRetries(_ state: inout LoopState, released: inout [Lanes.Release]) {
        guard !stop.isStopping else { return }
        for delivery in state.parked.popDue(now: ContinuousClock.now) {
            state.waitingChanged = true
            delivery.retryDue = nil
            guard let ticket = delivery.ticket, let resumed = try? state.scheduler.resume(ticket, item: delivery) else { continue }
            released += resumed
        }
    }

    /// Stopping: nothing more is sent; deliveries waiting for a lane or a retry are dropped.
    private func stopWork(_ state: inout LoopState, released: inout [Lanes.Release]) {
        let dropped = released.map(\.item) + state.readyToSend + state.parked.removeAll() + state.gates.releaseAllHeld() + state.heldBack
        released.removeAll()
        state.readyToSend.removeAll()
        state.heldBack.removeAll()
        if !state.backlogWrites.isEmpty {
            busy.subtract(state.backlogWrites.count, ordering: .relaxed)
            abandonBacklogWrites(state.backlogWrites, state: &state)
            state.backlogWrites.removeAll()
        }
        guard !dropped.isEmpty else { return }
        for delivery in dropped { delivery.ticket = nil }
        tracker.drop(dropped)
        metrics.abandoned(dropped.count)
    }

    /// One sleeping task at a time wakes the loop when the earliest retry is due.
    private func armTimer(_ state: inout LoopState) {
        if let armed = state.timerDue, armed <= ContinuousClock.now {
            state.timerDue = nil
            state.timer = nil
        }
        var earliest = state.parked.earliest
        if let records = state.recordsDue, earliest.map({ records < $0 }) ?? true { earliest = records }
        guard let due = earliest, !stop.isStopping else { return }
        if let armed = state.timerDue, armed <= due { return }
        state.timer?.cancel()
        state.timerDue = due
        let mailbox = self.mailbox
        state.timer = Task {
            try? await Task.sleep(until: due, clock: .continuous)
            mailbox.post(.wake)
        }
    }

    // MARK: Sending

    /// Sends what the lanes released: in-doubt deliveries are asked about first; the rest go as
    /// one batch.
    private func dispatch(_ released: [Lanes.Release], state: inout LoopState) {
        var batch: [Delivery] = []
        batch.reserveCapacity(released.count + state.readyToSend.count)
        batch += state.readyToSend
        state.readyToSend.removeAll()
        var orphans: [Delivery] = []
        var inDoubt: [Delivery] = []
        var nextReleases: [Lanes.Release] = []
        var pending = released
        while !pending.isEmpty {
            let awaited = tracker.areAwaited(pending.map(\.item))
            for (release, isAwaited) in zip(pending, awaited) {
                let delivery = release.item
                delivery.ticket = release.ticket
                // A delivery from the backlog is awaited by no message: its row is what waits,
                // and the worker that holds it sends it.
                if delivery.backlogPlace != nil, !isAwaited, state.backlog.holding(delivery.recipient.orderingKey) == nil {
                    complete(delivery, state: &state, released: &nextReleases)
                    continue
                }
                guard isAwaited || delivery.backlogPlace != nil else {
                    // Its messages were requeued with a lost connection: the user's lane goes
                    // on; the message comes again (here or elsewhere) and claims it anew.
                    orphans.append(delivery)
                    complete(delivery, state: &state, released: &nextReleases)
                    continue
                }
                if delivery.inDoubt {
                    inDoubt.append(delivery)
                    continue
                }
                batch.append(delivery)
            }
            pending = nextReleases
            nextReleases.removeAll()
        }
        reconcile(inDoubt)
        if !orphans.isEmpty {
            tracker.drop(orphans)
            metrics.abandoned(orphans.count)
        }
        send(batch, state: &state)
    }

    private func send(_ deliveries: [Delivery], state: inout LoopState) {
        guard !deliveries.isEmpty else { return }
        var pushes: [PushDelivery] = []
        var sent: [Delivery] = []
        pushes.reserveCapacity(deliveries.count)
        sent.reserveCapacity(deliveries.count)
        let now = state.now
        let clock = state.clock
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
                        delivery.rendered, event: delivery.context.event, target: target, deliveryKey: key, now: now, badge: delivery.badge,
                        position: delivery.position
                    )
                } catch {
                    logger.warning("Payload cannot be built; delivery failed", metadata: metadata(delivery, [LogKey.error: "\(error)"]))
                    failures.append((delivery, .permanentFailure(reason: error.description)))
                    continue
                }
            }
            if state.gates.isWatching {
                // A provider failed lately: its breaker decides (after the payload is built, so
                // that a probe is always sent).
                let provider = ProviderGates.Key(delivery.recipient)
                switch state.gates.verdict(provider, now: clock) {
                case .send:
                    break
                case .probe:
                    delivery.isProbe = true
                    metrics.circuit(provider: provider.platform, app: provider.app, state: .halfOpen(probing: true))
                case .hold:
                    // Until the probe answers; the lane serves others meanwhile.
                    if let ticket = delivery.ticket, let freed = try? state.scheduler.park(ticket) { state.carried += freed }
                    state.gates.hold(delivery, for: provider)
                    state.waitingChanged = true
                    continue
                case .reject:
                    deferrals.append(delivery)
                    continue
                }
            }
            delivery.attempts += 1
            if delivery.firstAttempt == nil { delivery.firstAttempt = clock }
            delivery.sentAt = clock
            pushes.append(
                PushDelivery(
                    deliveryKey: key, deviceId: delivery.recipient.subscription.deviceId, userId: delivery.recipient.addressedUserId,
                    eventId: delivery.context.event.id, position: delivery.position, target: target, payload: delivery.payload!
                ))
            sent.append(delivery)
        }
        // Lanes freed here are served on the next turn.
        var freed: [Lanes.Release] = []
        for (delivery, outcome) in failures { terminal(delivery, outcome, state: &state, released: &freed) }
        for delivery in deferrals {
            deferDelivery(delivery, reason: state.gates.reason(ProviderGates.Key(delivery.recipient)), state: &state, released: &freed)
        }
        state.carried += freed
        guard !pushes.isEmpty else {
            if !state.carried.isEmpty { mailbox.post(.wake) }
            return
        }
        busy.add(sent.count, ordering: .relaxed)
        let mailbox = self.mailbox
        let submitted = sent
        sender.submit(pushes, timed: { index, outcome, answerTime in mailbox.post(.outcome(submitted[index], outcome, answerTime: answerTime)) })
        if !state.carried.isEmpty { mailbox.post(.wake) }
    }

    /// In-doubt deliveries: does the journal have each now (another copy), or does the sender
    /// know it went out? Off the loop; the answers come back through the mailbox.
    private func reconcile(_ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
        busy.add(deliveries.count, ordering: .relaxed)
        let journal = self.journal, sender = self.sender, mailbox = self.mailbox
        Task {
            // One lookup for the turn's in-doubt deliveries (a takeover finds one per user with
            // a backlog): by message and device, not the message's whole history (a broadcast's
            // is its audience). A failed lookup is no answer: each is then asked of the sender.
            let recorded = try? await journal.recorded(messageIds: deliveries.map(\.context.journalId), deviceRefs: deliveries.map(\.deviceRef))
            for delivery in deliveries {
                let found = recorded?[delivery.context.journalId]?.first {
                    $0.deviceRef == delivery.deviceRef && $0.userId == delivery.recipient.addressedUserId && $0.state.isTerminal
                }
                if let found {
                    mailbox.post(.reconciled(delivery, .recorded(found.state)))
                } else if await sender.reconcile(delivery.key) == .delivered {
                    mailbox.post(.reconciled(delivery, .delivered))
                } else {
                    mailbox.post(.reconciled(delivery, .send))
                }
            }
        }
    }

    // MARK: Backlog

    /// Queues `delivery` in its user's backlog: written with the next backlog write; its message
    /// is settled once the row is durable. When the user's backlog begins, the user's deliveries
    /// waiting in the lanes are queued first: a user with a backlog has nothing in memory but
    /// what is in flight, so after a crash nothing but that can come back behind its queued ones.
    private func queueInBacklog(_ delivery: Delivery, user: OrderingKey, state: inout LoopState) {
        if !state.backlog.has(user) {
            for waiting in state.scheduler.removeWaiting(user: user) { queue(waiting, in: user, state: &state) }
        }
        queue(delivery, in: user, state: &state)
    }

    private func queue(_ delivery: Delivery, in user: OrderingKey, state: inout LoopState) {
        delivery.backlogPlace = state.backlog.place(for: user)
        state.backlogWrites.append(delivery)
        busy.add(1, ordering: .relaxed)  // until durable
        metrics.queued()
    }

    /// One backlog write at a time, of everything queued meanwhile: places are numbered in
    /// arrival order, so a later write never overtakes an earlier one's order.
    private func writeBacklog(_ state: inout LoopState) {
        guard let backlog, !state.backlogWriting, !state.backlogWrites.isEmpty else { return }
        let deliveries = state.backlogWrites
        state.backlogWrites.removeAll()
        state.backlogWriting = true
        // The engine's own fields read here, on its task; the rest of a delivery is immutable.
        let places = deliveries.map(\.backlogPlace), attempts = deliveries.map(\.attempts), inDoubt = deliveries.map(\.inDoubt)
        let retry = self.retry, mailbox = self.mailbox
        Task {
            let encoder = JSONEncoder()
            let rows = deliveries.indices.compactMap { index -> BacklogRow? in
                let delivery = deliveries[index], attempts = attempts[index]
                let snapshot = BacklogSnapshot(delivery, attempts: attempts, inDoubt: inDoubt[index])
                guard let place = places[index], let json = try? encoder.encode(snapshot) else { return nil }
                return BacklogRow(
                    place: place, deviceRef: delivery.deviceRef, position: delivery.position, messageId: delivery.context.journalId,
                    userId: delivery.recipient.addressedUserId, attempts: attempts, delivery: Array(json))
            }
            // A delivery that cannot be written as JSON (never seen) fails the batch: its
            // messages come again rather than being acknowledged without it.
            var durable = false
            if rows.count == deliveries.count {
                durable =
                    await retry.run("DeliveryBacklog.enqueue", giveUp: .aborted) { () async throws(StoreError) in
                        try await backlog.enqueue(rows)
                    } != nil
            }
            mailbox.post(.backlogWritten(deliveries, durable))
        }
    }

    private func backlogWritten(_ deliveries: [Delivery], durable: Bool, state: inout LoopState) {
        state.backlogWriting = false
        busy.subtract(deliveries.count, ordering: .relaxed)
        guard durable else {
            abandonBacklogWrites(deliveries, state: &state)
            return
        }
        for delivery in deliveries {
            delivery.hasPendingRow = true  // the `.queued` journal row
            state.backlogTouched.insert(delivery.recipient.orderingKey)
        }
        settle(tracker.finish(deliveries))
        state.backlog.written(deliveries)
    }

    /// Deliveries whose backlog write did not happen (stopping) or was given up (aborting): their
    /// messages are not acknowledged and come again.
    private func abandonBacklogWrites(_ deliveries: [Delivery], state: inout LoopState) {
        state.backlog.notWritten(deliveries)
        tracker.drop(deliveries)
        metrics.abandoned(deliveries.count)
    }

    /// Queues `scope`'s deliveries held back while the lock was away, in arrival order (behind
    /// their users' queued ones).
    private func queueHeldBack(_ scope: Int, _ state: inout LoopState) {
        guard !stop.isStopping else { return }
        for delivery in state.takeHeldBack(scope: scope) { queueInBacklog(delivery, user: delivery.recipient.orderingKey, state: &state) }
    }

    /// Tells ``hasLeft(scope:)`` about the scopes being left that have nothing in the lanes here.
    private func reportLeft(_ state: inout LoopState) {
        let done = state.backlog.takeLeftScopes()
        guard !done.isEmpty else { return }
        left.withLock { $0.formUnion(done) }
    }

    private func backlogMetadata(_ scope: Int, count: Int?) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        if let count { metadata[LogKey.count] = "\(count)" }
        if settings.partitions > 0 { metadata[LogKey.partition] = "\(scope)" }
        return metadata
    }

    /// Hands the lanes the next queued delivery of each user looked at this turn whose lanes hold
    /// nothing else of it, and starts the reads they need (then those of users whose read waited).
    private func feedFromBacklog(_ state: inout LoopState, released: inout [Lanes.Release]) {
        guard !state.backlogTouched.isEmpty, state.backlog.holdsAny else { return }
        var users = Array(state.backlogTouched)
        state.backlogTouched.removeAll()
        guard !stop.isStopping else { return }
        var reads: [UserBacklogs.Read] = []
        var index = 0
        while index < users.count {
            let user = users[index]
            index += 1
            let idle = !state.scheduler.isRunning(user: user) && state.scheduler.waitingCount(user: user) == 0
            for delivery in state.backlog.take(for: user, room: idle ? 1 : 0) {
                state.scheduler.enqueue(delivery, user: user, isBulk: delivery.recipient.isBroadcast, into: &released)
            }
            if let read = state.backlog.readNeeded(for: user) { reads.append(read) }
            state.backlog.endIfDone(user)
            if index == users.count { users += state.backlog.usersWaitingForRead() }
        }
        for start in stride(from: 0, to: reads.count, by: UserBacklogs.readBatch) {
            readBacklog(Array(reads[start..<min(reads.count, start + UserBacklogs.readBatch)]))
        }
    }

    /// Reads the next window of each of these users' backlogs, in one query, off the loop.
    private func readBacklog(_ reads: [UserBacklogs.Read]) {
        guard let backlog else { return }
        let retry = self.retry, mailbox = self.mailbox, logger = self.logger
        Task {
            let keys = reads.map { UserBacklogs.text($0.user) }
            guard
                let windows = await retry.run(
                    "DeliveryBacklog.windows",
                    { () async throws(StoreError) in
                        try await backlog.windows(zip(reads, keys).map { read, key in (key, read.after, read.limit) })
                    })
            else {
                for read in reads { mailbox.post(.backlogRead(read.user, nil, upTo: nil)) }
                return
            }
            let decoder = JSONDecoder()
            for (read, key) in zip(reads, keys) {
                let entries = windows[key] ?? []
                var deliveries: [Delivery] = []
                for entry in entries {
                    let place = BacklogPlace(orderKey: key, seq: entry.seq)
                    do {
                        let snapshot = try decoder.decode(BacklogSnapshot.self, from: Data(entry.delivery))
                        deliveries.append(snapshot.delivery(at: place, headInDoubt: read.inDoubt && deliveries.isEmpty))
                    } catch {
                        // Written by another version of Herald: it stays in the table for an operator.
                        logger.error(
                            "A queued delivery cannot be read; skipped, its row kept",
                            metadata: [LogKey.userId: "\(read.user.userId)", LogKey.platform: "\(read.user.platform)", LogKey.error: "\(error)"])
                    }
                }
                mailbox.post(.backlogRead(read.user, deliveries, upTo: entries.last?.seq))
            }
        }
    }

    // MARK: Records

    private func writeRecords(_ state: inout LoopState) {
        guard !state.records.isEmpty, state.recordsInFlight < settings.recordConcurrency else { return }
        if lingers(&state) { return }
        state.recordsDue = nil
        while !state.records.isEmpty, state.recordsInFlight < settings.recordConcurrency {
            let batch = state.records.take(settings.recordBatchSize)
            state.recordsInFlight += 1
            let journal = self.journal, retry = self.retry, mailbox = self.mailbox
            Task {
                // Outcomes already sent must be written even during a graceful stop; only an
                // abort gives up.
                let durable =
                    await retry.run("DeliveryJournal.record", giveUp: .aborted) { () async throws(StoreError) in
                        try await journal.record(batch.rows)
                    } != nil
                // The messages whose last delivery this was are acknowledged from here, not
                // after a turn of the engine, which only learns that the write ended.
                let settled = batch.settledDeliveries
                if durable { self.settle(self.tracker.finish(settled)) }
                mailbox.post(.recorded(settled, durable))
            }
        }
    }

    /// Whether the queued records, fewer than ``Settings/recordLingerBelow``, wait for more: up
    /// to ``Settings/recordLinger`` after the turn that found them waiting (``armTimer(_:)``
    /// wakes the loop then). Never while stopping or finishing.
    private func lingers(_ state: inout LoopState) -> Bool {
        guard settings.recordLinger > .zero, state.records.count < settings.recordLingerBelow, !stop.isStopping,
            !finished.load(ordering: .relaxed)
        else { return false }
        let due = state.recordsDue ?? state.clock + settings.recordLinger
        state.recordsDue = due
        return state.clock < due
    }

    private func metadata(_ delivery: Delivery, _ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            LogKey.eventId: "\(delivery.context.event.id)",
            LogKey.userId: "\(delivery.recipient.addressedUserId)",
            LogKey.deviceId: "\(delivery.recipient.subscription.deviceId)",
            LogKey.platform: "\(delivery.recipient.subscription.platform)",
            LogKey.token: "\(LogKey.shortToken(delivery.recipient.subscription.token))",
            LogKey.deliveryKey: "\(delivery.key)",
            LogKey.messageKey: "\(delivery.context.key.text)",
        ]
        metadata.merge(extra) { _, new in new }
        return metadata
    }
}

/// The engine loop's own state: only its task touches it.
private struct LoopState {
    var scheduler: Lanes
    var parked = ParkedDeliveries()
    var records = RecordBatch()
    var recordsInFlight = 0
    var readyToSend: [Delivery] = []
    var gates: ProviderGates
    /// Parked or held deliveries changed: report the waiting gauge at the end of the turn.
    var waitingChanged = false
    var finishedWithoutRecord: [Delivery] = []
    /// Releases freed while sending (a delivery that failed before it was sent): next turn.
    var carried: [Lanes.Release] = []
    var timer: Task<Void, Never>?
    /// When the queued records are written even if few (``DeliveryEngine/lingers(_:)``).
    var recordsDue: ContinuousClock.Instant?
    var timerDue: ContinuousClock.Instant?
    /// Terminal outcomes of this turn, counted into the metrics at its end.
    var outcomes = WorkerMetrics.Outcomes()
    /// The wall clock at the start of the turn (publish→sent latency).
    var now = Date()
    /// The monotonic clock at the start of the turn.
    var clock = ContinuousClock.now

    var backlog: UserBacklogs
    /// Deliveries queued in the backlog whose write has not begun.
    var backlogWrites: [Delivery] = []
    var backlogWriting = false
    /// Users whose backlog may have deliveries for the lanes or need a read: looked at once per turn.
    var backlogTouched: Set<OrderingKey> = []
    /// New deliveries of users with queued ones, while the lock is away (``UserBacklogs/holdsBack(_:)``).
    var heldBack: [Delivery] = []
    /// Removes and returns `scope`'s held-back deliveries, in arrival order.
    mutating func takeHeldBack(scope: Int) -> [Delivery] {
        guard !heldBack.isEmpty else { return [] }
        var taken: [Delivery] = [], kept: [Delivery] = []
        for delivery in heldBack {
            if backlog.scope(of: delivery.recipient.orderingKey) == scope { taken.append(delivery) } else { kept.append(delivery) }
        }
        heldBack = kept
        return taken
    }

    init(settings: DeliveryEngine.Settings) {
        scheduler = PerUserScheduler(lanes: settings.lanes)
        gates = ProviderGates(policy: settings.circuitBreaker)
        backlog = UserBacklogs(
            memoryAllowance: settings.backlogAfter, windowSize: settings.backlogWindow, memoryBudget: settings.backlogMemory,
            partitions: settings.partitions)
    }
}
