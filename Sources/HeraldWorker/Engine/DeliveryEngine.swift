import Foundation
import HeraldCore
import HeraldDelivery
import HeraldStore
import Logging
import Synchronization

/// Where claimed deliveries become outcomes: ONE task runs the ``EngineCore``'s turns and
/// carries out what each decides (``EngineActions``): it submits to the sender, starts the
/// journal and backlog writes and reads, looks up in-doubt deliveries, and acknowledges.
///
/// One turn takes every event posted to the ``EngineMailbox`` since the last (deliveries from
/// the claim stage, the senders' answers, finished writes, a due retry), and everything the
/// lanes released goes out as one ``HeraldDelivery/PushSender/submit(_:timed:)`` call. No task,
/// actor hop or lock per delivery: the costs are per turn, and a turn takes what arrived while
/// the previous one ran. The rules themselves (order, lanes, retries, the backlog, the breaker,
/// stopping) are the core's.
///
/// Stopping: once ``StopSignal/isStopping``, nothing more is released or retried; what was sent
/// finishes and is recorded (a graceful stop waits for that, bounded by the worker). Once
/// aborted, record writes give up too and the loop ends.
final class DeliveryEngine: Sendable {
    let mailbox = EngineMailbox()
    private let settings: EngineCore.Settings
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
    /// ``EngineCore/running`` after the last turn: what a stop waits for.
    private let busy = Atomic<Int>(0)
    private let finished = Atomic<Bool>(false)
    /// Scopes being left whose backlog has nothing in the lanes here any more (``hasLeft(scope:)``).
    private let left = Mutex<Set<Int>>([])

    init(
        settings: EngineCore.Settings, sender: any PushSender, journal: DeliveryJournal, backlog: DeliveryBacklog?, tracker: MessageTracker,
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
    var running: Int { busy.load(ordering: .sequentiallyConsistent) }

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
        let tracker = self.tracker
        var core = EngineCore(
            settings: settings, deadTokens: deadTokens, metrics: metrics, logger: logger, areAwaited: { tracker.areAwaited($0) })
        var timer: Task<Void, Never>?
        while true {
            // Nil only once its task is cancelled (the worker aborts).
            guard let events = await mailbox.take() else { break }
            let finishing = finished.load(ordering: .relaxed)
            let actions = core.turn(
                events, EngineCore.Turn(now: Date(), clock: .now, stopping: stop.isStopping, finished: finishing))
            // Raised before the turn's effects start, lowered only after they are carried out (its
            // acknowledgements included): what a stop waits for is never seen done too early.
            let running = core.running
            if running > busy.load(ordering: .sequentiallyConsistent) { busy.store(running, ordering: .sequentiallyConsistent) }
            perform(actions, timer: &timer)
            let wasRunning = busy.exchange(running, ordering: .sequentiallyConsistent)
            // A stop waits for nothing running, a handover for its scopes to be left.
            if (running == 0 && wasRunning > 0) || !actions.leftScopes.isEmpty { tracker.changes.changed() }
            if stop.isAborted { break }
            if finished.load(ordering: .relaxed), core.isIdle { break }
        }
        timer?.cancel()
    }

    // MARK: Carrying out a turn

    private func perform(_ actions: EngineActions, timer: inout Task<Void, Never>?) {
        for settlement in actions.settlements {
            switch settlement {
            case .finish(let deliveries):
                settle(tracker.finish(deliveries))
            case .drop(let deliveries):
                tracker.drop(deliveries)
                metrics.abandoned(deliveries.count)
            case .deferred(let deliveries, let until):
                tracker.markDeferred(deliveries, until: until)
            }
        }
        if actions.fannedOut { metrics.inFlight(messages: tracker.messageCount, deliveries: tracker.deliveryCount) }
        reconcile(actions.reconcile)
        if !actions.pushes.isEmpty {
            let mailbox = self.mailbox, submitted = actions.sends
            sender.submit(actions.pushes, timed: { index, outcome, answerTime in mailbox.post(.outcome(submitted[index], outcome, answerTime: answerTime)) })
        }
        for batch in actions.recordWrites { write(batch) }
        if !actions.backlogWrite.isEmpty { writeBacklog(actions.backlogWrite) }
        for reads in actions.backlogReads { readBacklog(reads) }
        if !actions.leftScopes.isEmpty { left.withLock { $0.formUnion(actions.leftScopes) } }
        if let due = actions.wakeAt {
            timer?.cancel()
            let mailbox = self.mailbox
            timer = Task {
                try? await Task.sleep(until: due, clock: .continuous)
                mailbox.post(.wake)
            }
        }
        if actions.turnAgain { mailbox.post(.wake) }
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

    /// In-doubt deliveries: does the journal have each now (another copy), or does the sender
    /// know it went out? The answers come back through the mailbox.
    private func reconcile(_ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
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

    /// One journal write. Outcomes already sent are written even during a graceful stop; only an
    /// abort gives up. The messages whose last delivery this was are acknowledged from here, not
    /// after a turn of the engine, which only learns that the write ended.
    private func write(_ batch: RecordBatch) {
        let journal = self.journal, retry = self.retry, mailbox = self.mailbox
        Task {
            let durable =
                await retry.run("DeliveryJournal.record", giveUp: .aborted) { () async throws(StoreError) in
                    try await journal.record(batch.rows)
                } != nil
            let settled = batch.settledDeliveries
            if durable { self.settle(self.tracker.finish(settled)) }
            mailbox.post(.recorded(settled, durable))
        }
    }

    /// Writes deliveries queued in their users' backlog, as one statement.
    private func writeBacklog(_ deliveries: [Delivery]) {
        let mailbox = self.mailbox
        guard let backlog else {
            // Nothing is queued without a backlog to hold it (no scope is ever acquired).
            mailbox.post(.backlogWritten(deliveries, false))
            return
        }
        // The engine's own fields read here, on its task; the rest of a delivery is immutable.
        let places = deliveries.map(\.backlogPlace), attempts = deliveries.map(\.attempts), inDoubt = deliveries.map(\.inDoubt)
        let retry = self.retry
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

    /// Reads the next window of each of these users' backlogs, in one query.
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
}
