import Foundation
import HeraldAMQP
import HeraldCore
import HeraldStore
import Logging
import Synchronization

/// Sends broadcasts too large to hold in memory (more subscriptions than
/// ``WorkerConfiguration/broadcastMemoryLimit``) a window of devices at a time, so that memory
/// stays flat whatever the audience and other users' pushes keep flowing beside it
/// (docs/architecture.md, "Broadcasts").
///
/// The planner hands such a broadcast to ``begin(_:event:metadata:key:)``: it is written down
/// (``HeraldStore/BroadcastRepository``, with its journal message row) and its AMQP message is
/// acknowledged at once; it no longer sits in the prefetch window. Then windows of
/// ``WorkerConfiguration/broadcastWindow`` devices, in device order, at most
/// ``WorkerConfiguration/broadcastWindows`` at once, are selected, rendered, claimed and handed
/// to the engine like a message's deliveries (``ClaimStage/startWindow(_:messageId:resumed:)``);
/// once every delivery of the oldest windows is settled, the broadcast's cursor moves past them.
///
/// One worker runs a broadcast at a time: the holder of its lease, renewed every third of
/// ``WorkerConfiguration/broadcastLease``. A lease that ran out (its worker died, or lost the
/// database for that long) is taken over by any worker, which resumes after the cursor and
/// checks the windows that were under way against the journal: a device gets the broadcast
/// once, or, in doubt after a crash, again with the same collapse id. A graceful stop gives
/// the lease up once the deliveries in flight are done (``releaseHeld()``).
final class BroadcastRunner: Sendable {
    private struct Job: Sendable {
        var broadcast: Broadcast
        let delivery: AMQPDelivery
        let event: Event
        let metadata: EventMetadata
    }

    private let configuration: WorkerConfiguration
    private let store: Store
    private let claims: ClaimStage
    private let tracker: MessageTracker
    private let acknowledger: Acknowledger
    private let retry: StoreRetry
    private let stop: StopSignal
    private let logger: Logger
    /// Who holds a lease: this process.
    let holder: String
    private let jobs = AsyncStream<Job>.makeStream()
    /// The broadcasts this process holds (a lease it failed to renew is dropped).
    private let held = Mutex<Set<Int64>>([])
    /// The broker connection of the current session: a window's message names one, though it
    /// is never acknowledged on it. Nil while disconnected.
    private let connection = Mutex<AMQPConnection?>(nil)
    private let connectionChanged = ChangeSignal()

    init(
        configuration: WorkerConfiguration, store: Store, claims: ClaimStage, tracker: MessageTracker, acknowledger: Acknowledger,
        retry: StoreRetry, stop: StopSignal, logger: Logger
    ) {
        self.configuration = configuration
        self.store = store
        self.claims = claims
        self.tracker = tracker
        self.acknowledger = acknowledger
        self.retry = retry
        self.stop = stop
        self.logger = logger
        self.holder = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):\(UInt32.random(in: 0...UInt32.max))"
    }

    /// The connection of the broker session that began (nil: it ended).
    func use(_ connection: AMQPConnection?) {
        self.connection.withLock { $0 = connection }
        connectionChanged.changed()
    }

    /// Writes the broadcast of `message` down and acknowledges the message; it is sent from
    /// then on. A message whose broadcast is written down already (a redelivery, a repeat) is
    /// acknowledged without more. Stopping meanwhile: the message stays unsettled (requeued).
    func begin(_ message: TrackedMessage, event: Event, metadata: EventMetadata, key: MessageKey) async {
        let delivery = message.delivery
        let broadcast = Broadcast(
            messageId: 0, key: key, body: Array(delivery.body), contentType: delivery.properties.contentType, partition: message.slice?.partition,
            partitions: message.slice?.count)
        guard
            let started = await retry.run(
                "BroadcastRepository.begin",
                { () async throws(StoreError) in
                    try await store.broadcasts.begin(broadcast, eventId: event.id, holder: holder, lease: configuration.broadcastLease)
                })
        else { return }
        if let started {
            held.withLock { _ = $0.insert(started.messageId) }
            logger.info(
                "Broadcast written down; it is sent in windows", metadata: [LogKey.messageKey: "\(key)", LogKey.eventId: "\(event.id)"])
            jobs.continuation.yield(Job(broadcast: started, delivery: delivery, event: event, metadata: metadata))
        } else {
            logger.info("Broadcast known already; acknowledged", metadata: [LogKey.messageKey: "\(key)", LogKey.eventId: "\(event.id)"])
        }
        if tracker.settle(message) { acknowledger.ack(message) }
    }

    /// Runs the broadcasts begun here or taken over, renewing their leases, until stopping.
    func run() async {
        let token = stop.onStop { [jobs] in jobs.continuation.finish() }
        defer { stop.remove(token) }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.keepLeases() }
            for await job in jobs.stream {
                group.addTask { await self.drive(job) }
            }
        }
    }

    /// Every third of the lease: renews this process's leases, and takes over broadcasts whose
    /// lease ran out.
    private func keepLeases() async {
        let lease = configuration.broadcastLease
        while await stop.sleep(for: lease / 3) {
            let mine = Array(held.withLock { $0 })
            if !mine.isEmpty,
                let renewed = await retry.run(
                    "BroadcastRepository.renew",
                    { () async throws(StoreError) in
                        try await store.broadcasts.renew(mine, holder: holder, lease: lease)
                    })
            {
                let lost = Set(mine).subtracting(renewed)
                if !lost.isEmpty {
                    held.withLock { $0.subtract(lost) }
                    logger.warning("Lost the lease of broadcasts; another worker resumes them", metadata: [LogKey.count: "\(lost.count)"])
                }
            }
            while !stop.isStopping,
                let taken = await retry.run(
                    "BroadcastRepository.takeOver",
                    { () async throws(StoreError) in
                        try await store.broadcasts.takeOver(holder: holder, lease: lease)
                    }), let taken
            {
                await resume(taken)
            }
        }
    }

    /// A broadcast taken over: decoded again, and run from its cursor.
    private func resume(_ broadcast: Broadcast) async {
        var properties = AMQPProperties()
        properties.contentType = broadcast.contentType
        let delivery = AMQPDelivery(body: Data(broadcast.body), routingKey: configuration.topology.routingKey, deliveryTag: 0, properties: properties)
        guard let catalog = await retry.run("TemplateCache.catalog", { () async throws(StoreError) in try await store.templateCache.catalog() }) else {
            return
        }
        let metadata = [LogKey.messageKey: Logger.MetadataValue(stringLiteral: "\(broadcast.key)")]
        switch EventAdmission.admit(delivery, decoder: configuration.decoder, catalog: catalog) {
        case .admitted(let event, let eventMetadata):
            held.withLock { _ = $0.insert(broadcast.messageId) }
            logger.info("Resuming a broadcast whose worker went away", metadata: metadata.merging([LogKey.cursor: "\(broadcast.cursor)"]) { $1 })
            jobs.continuation.yield(Job(broadcast: broadcast, delivery: delivery, event: event, metadata: eventMetadata))
        case .refused(_, let reason, _):
            // Its templates changed since it began: nothing can be rendered; ended, said once.
            logger.error("A broadcast taken over cannot be rendered any more; ended", metadata: metadata.merging([LogKey.error: "\(reason)"]) { $1 })
            _ = await retry.run("BroadcastRepository.advance") { () async throws(StoreError) in
                try await store.broadcasts.advance(
                    broadcast.messageId, cursor: broadcast.cursor, selected: broadcast.selected, finished: true, holder: holder)
            }
        }
    }

    private func isHeld(_ messageId: Int64) -> Bool { held.withLock { $0.contains(messageId) } }

    /// Where windows report that they settled (nil: look again, a stop or a rerun's time).
    private typealias Reports = (stream: AsyncStream<BroadcastWindow.Settled?>, continuation: AsyncStream<BroadcastWindow.Settled?>.Continuation)

    /// One broadcast as its driver knows it: its windows (``BroadcastWindows``), and what it
    /// reads and selects.
    private struct Drive {
        let job: Job
        var windows: BroadcastWindows
        var selector: WindowSelector
        /// The next window's devices, read while this one is claimed and sent.
        var next: (after: Int64, page: Task<(subscriptions: [Subscription], last: Int64?)?, Never>)?
    }

    /// Sends one broadcast's windows until it is done, its lease is lost, or the worker stops.
    private func drive(_ job: Job) async {
        let id = job.broadcast.messageId
        let reports = AsyncStream<BroadcastWindow.Settled?>.makeStream()
        let wake = stop.onStop { reports.continuation.yield(nil) }
        defer {
            stop.remove(wake)
            reports.continuation.finish()
        }
        var events = reports.stream.makeAsyncIterator()
        var state = Drive(
            job: job, windows: BroadcastWindows(job.broadcast, maxOpen: configuration.broadcastWindows, now: .now),
            selector: WindowSelector(
                event: job.event, tag: job.metadata.tag, slice: Self.slice(of: job.broadcast), policy: configuration.selectionPolicy, logger: logger))
        defer { state.next?.page.cancel() }
        while !stop.isStopping, isHeld(id) {
            await fill(&state, reports: reports)
            guard isHeld(id) else { break }
            if state.windows.isDone {
                // The last window was done before the end of the audience was seen.
                await record(state.windows.broadcast, finished: true)
                break
            }
            guard let event = await events.next() else { break }
            if let settled = event, let rerunAt = state.windows.settled(settled) {
                Task { [continuation = reports.continuation] in
                    try? await Task.sleep(until: rerunAt, clock: .continuous)
                    continuation.yield(nil)
                }
            }
            await rerunDue(&state, reports: reports)
            if state.windows.advance(now: .now) { await record(state.windows.broadcast, finished: state.windows.isDone) }
        }
        if state.windows.isDone {
            held.withLock { _ = $0.remove(id) }
            logger.info(
                "Broadcast done", metadata: [LogKey.messageKey: "\(state.windows.broadcast.key)", LogKey.count: "\(state.windows.broadcast.selected)"])
        } else if !stop.isStopping {
            held.withLock { _ = $0.remove(id) }  // its lease was lost
        }
        // Stopping: still held, until ``releaseHeld()``.
    }

    /// Starts windows until ``WorkerConfiguration/broadcastWindows`` are under way, the audience
    /// ends, or a step cannot be done now (stopping, the database, the lease lost).
    private func fill(_ state: inout Drive, reports: Reports) async {
        let id = state.windows.broadcast.messageId
        while state.windows.wantsWindow, !stop.isStopping {
            let after = state.windows.readCursor
            let reading = readPage(after: after, reusing: state.next)
            state.next = nil
            guard let page = await reading.value else { return }
            guard let last = page.last else {
                state.windows.audienceEnded()
                return
            }
            state.next = (last, readPage(after: last))
            guard let catalog = await retry.run("TemplateCache.catalog", { () async throws(StoreError) in try await store.templateCache.catalog() })
            else { return }
            let (recipients, rendered) = state.selector.select(page.subscriptions, catalog: catalog)
            // A window after the claimed mark is fresh: the mark moves past it and its positions
            // are reserved in one statement. One before it may have been under way.
            let resumed = state.windows.isResumed(after: after)
            var positions: [Int64?]?
            if state.windows.needsClaim(through: last) {
                let devices = resumed ? [] : recipients.map { $0.subscription.deviceRef ?? -1 }
                guard
                    let claimed = await retry.run(
                        "BroadcastRepository.claim",
                        { () async throws(StoreError) in
                            try await store.broadcasts.claim(id, through: last, holder: holder, positionsFor: devices)
                        })
                else { return }
                guard let claimed else {
                    held.withLock { _ = $0.remove(id) }  // another worker holds it now
                    return
                }
                state.windows.claimed(through: last)
                if !resumed { positions = claimed }
            }
            guard
                let window = await start(
                    state.job, after: after, through: last, recipients: recipients, rendered: rendered, positions: positions, reports: reports)
            else { return }
            state.windows.started(window, through: last)
        }
    }

    /// Starts again the windows whose deferred deliveries are due.
    private func rerunDue(_ state: inout Drive, reports: Reports) async {
        for index in state.windows.dueReruns(now: .now) {
            guard !stop.isStopping else { return }
            let old = state.windows.open[index]
            guard
                let window = await start(
                    state.job, after: old.window.after, through: old.window.through, recipients: old.recipients,
                    rendered: old.rendered, positions: nil, reports: reports)
            else { return }
            state.windows.restarted(window, at: index)
        }
    }

    /// Gives up the leases of the broadcasts under way here (a graceful stop, once the
    /// deliveries in flight are done): another worker, or this one restarted, resumes them at
    /// once instead of after the lease. One try; otherwise the leases run out.
    func releaseHeld() async {
        let mine = held.withLock { held in
            defer { held.removeAll() }
            return Array(held)
        }
        guard !mine.isEmpty else { return }
        do {
            try await store.broadcasts.release(mine, holder: holder)
            logger.info("Broadcasts under way left to the next worker", metadata: [LogKey.count: "\(mine.count)"])
        } catch {
            logger.warning("Could not give up the broadcasts' leases; they run out", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// Writes how far `broadcast` went; a lost lease stops its driver.
    private func record(_ broadcast: Broadcast, finished: Bool) async {
        let kept = await retry.run("BroadcastRepository.advance") { () async throws(StoreError) in
            try await store.broadcasts.advance(
                broadcast.messageId, cursor: broadcast.cursor, selected: broadcast.selected, finished: finished, holder: holder)
        }
        if kept == false { held.withLock { _ = $0.remove(broadcast.messageId) } }
    }

    /// The read of the window after `cursor` begun ahead, if `ahead` is that one (another is
    /// cancelled), or a new one.
    private func readPage(
        after cursor: Int64, reusing ahead: (after: Int64, page: Task<(subscriptions: [Subscription], last: Int64?)?, Never>)?
    ) -> Task<(subscriptions: [Subscription], last: Int64?)?, Never> {
        if let ahead {
            if ahead.after == cursor { return ahead.page }
            ahead.page.cancel()
        }
        return readPage(after: cursor)
    }

    /// Reads a window's devices, off the driver's path.
    private func readPage(after cursor: Int64) -> Task<(subscriptions: [Subscription], last: Int64?)?, Never> {
        Task { [store, retry, window = configuration.broadcastWindow] in
            await retry.run("DeviceRepository.subscriptionsAfterDevice") { () async throws(StoreError) in
                try await store.devices.subscriptions(afterDevice: cursor, devices: window)
            }
        }
    }

    /// Starts one window: its own message, claimed and handed to the engine (`positions`
    /// reserved for a fresh window; nil: checked against the journal first). Nil when stopping.
    private func start(
        _ job: Job, after: Int64, through: Int64, recipients: [Recipient], rendered: [RenderedNotification], positions: [Int64?]?, reports: Reports
    ) async -> BroadcastWindows.Open? {
        guard let connection = await currentConnection() else { return nil }
        let window = BroadcastWindow(after: after, through: through) { reports.continuation.yield($0) }
        let message = TrackedMessage(
            delivery: job.delivery, queue: configuration.topology.queue, connection: connection, session: 0, slice: Self.slice(of: job.broadcast),
            window: window)
        // No publication time: a window's deliveries are not in the publish→sent histogram
        // (minutes for millions of devices, by design); the broadcast's progress tells its pace.
        let planned = PlannedMessage(
            message: message, event: job.event, metadata: job.metadata, key: job.broadcast.key, dropsRepeats: false, mayBeKnown: positions == nil,
            publishedAt: nil, recipients: recipients, rendered: rendered)
        guard await claims.startWindow(planned, messageId: job.broadcast.messageId, positions: positions) else { return nil }
        return BroadcastWindows.Open(window: window, recipients: recipients, rendered: rendered)
    }

    private static func slice(of broadcast: Broadcast) -> PartitionSlice? {
        broadcast.partition.flatMap { partition in broadcast.partitions.map { PartitionSlice(partition: partition, count: $0) } }
    }

    /// The current session's connection, waiting while there is none; nil when stopping.
    private func currentConnection() async -> AMQPConnection? {
        while !stop.isStopping {
            if let connection = connection.withLock({ $0 }) { return connection }
            // Woken by the next session's `use(_:)`; the deadline only bounds one wait.
            _ = await connectionChanged.wait(for: { connection.withLock { $0 != nil } }, until: .now + .seconds(60), stop: stop)
        }
        return nil
    }
}
