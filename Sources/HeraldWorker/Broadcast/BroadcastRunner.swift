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

    /// A window started and not yet done.
    private struct Open {
        var window: BroadcastWindow
        let planned: PlannedMessage
        var done = false
        /// Deferred deliveries (no backlog, a provider's breaker open): sent again then.
        var rerunAt: ContinuousClock.Instant?
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

    /// One broadcast as its driver knows it: its row, and the windows under way.
    private struct Drive {
        let job: Job
        var broadcast: Broadcast
        var selector: WindowSelector
        var open: [Open] = []
        /// The last device of the last window started.
        var readCursor: Int64
        /// The end of the audience was seen.
        var exhausted = false
        /// The next window's devices, read while this one is claimed and sent.
        var next: (after: Int64, page: Task<(subscriptions: [Subscription], last: Int64?)?, Never>)?
        /// When the row was last written.
        var recorded = ContinuousClock.now

        var isDone: Bool { exhausted && open.isEmpty }
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
            job: job, broadcast: job.broadcast,
            selector: WindowSelector(
                event: job.event, tag: job.metadata.tag, slice: Self.slice(of: job.broadcast), policy: configuration.selectionPolicy, logger: logger),
            readCursor: job.broadcast.cursor)
        defer { state.next?.page.cancel() }
        while !stop.isStopping, isHeld(id) {
            await fill(&state, reports: reports)
            guard isHeld(id) else { break }
            if state.isDone {
                // The last window was done before the end of the audience was seen.
                await record(state.broadcast, finished: true)
                break
            }
            guard let event = await events.next() else { break }
            if let settled = event { note(settled, in: &state, reports: reports) }
            await rerunDue(&state, reports: reports)
            await advance(&state)
        }
        if state.isDone {
            held.withLock { _ = $0.remove(id) }
            logger.info("Broadcast done", metadata: [LogKey.messageKey: "\(state.broadcast.key)", LogKey.count: "\(state.broadcast.selected)"])
        } else if !stop.isStopping {
            held.withLock { _ = $0.remove(id) }  // its lease was lost
        }
        // Stopping: still held, until ``releaseHeld()``.
    }

    /// Starts windows until ``WorkerConfiguration/broadcastWindows`` are under way, the audience
    /// ends, or a step cannot be done now (stopping, the database, the lease lost).
    private func fill(_ state: inout Drive, reports: Reports) async {
        let id = state.broadcast.messageId
        while state.open.count < configuration.broadcastWindows, !state.exhausted, !stop.isStopping {
            let after = state.readCursor
            let reading = readPage(after: after, reusing: state.next)
            state.next = nil
            guard let page = await reading.value else { return }
            guard let last = page.last else {
                state.exhausted = true
                return
            }
            state.next = (last, readPage(after: last))
            guard let catalog = await retry.run("TemplateCache.catalog", { () async throws(StoreError) in try await store.templateCache.catalog() })
            else { return }
            let (recipients, rendered) = state.selector.select(page.subscriptions, catalog: catalog)
            // A window after the claimed mark is fresh: the mark moves past it and its positions
            // are reserved in one statement. One before it may have been under way.
            let resumed = after < state.broadcast.claimed
            var positions: [Int64?]?
            if last > state.broadcast.claimed {
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
                state.broadcast.claimed = last
                if !resumed { positions = claimed }
            }
            guard
                let window = await start(
                    state.job, after: after, through: last, recipients: recipients, rendered: rendered, positions: positions, reports: reports)
            else { return }
            state.open.append(window)
            state.readCursor = last
        }
    }

    /// A window settled: done, or some deliveries deferred (a provider's breaker, no backlog),
    /// to be sent again at `deferredUntil`.
    private func note(_ settled: BroadcastWindow.Settled, in state: inout Drive, reports: Reports) {
        guard let index = state.open.firstIndex(where: { $0.window === settled.window }) else { return }
        if let until = settled.deferredUntil {
            state.open[index].rerunAt = until
            Task { [continuation = reports.continuation] in
                try? await Task.sleep(until: until, clock: .continuous)
                continuation.yield(nil)
            }
        } else {
            state.open[index].done = true
        }
    }

    /// Starts again the windows whose deferred deliveries are due.
    private func rerunDue(_ state: inout Drive, reports: Reports) async {
        for index in state.open.indices {
            guard let due = state.open[index].rerunAt, due <= .now, !stop.isStopping else { continue }
            let old = state.open[index]
            guard
                let window = await start(
                    state.job, after: old.window.after, through: old.window.through, recipients: old.planned.recipients,
                    rendered: old.planned.rendered, positions: nil, reports: reports)
            else { return }
            state.open[index] = window
        }
    }

    /// Moves the cursor past the oldest windows that are done; writes the row at most once a
    /// second (or at the end): a resume checks the windows after the written cursor against the
    /// journal anyway.
    private func advance(_ state: inout Drive) async {
        var moved = false
        while let first = state.open.first, first.done {
            state.broadcast.cursor = first.window.through
            state.broadcast.selected += Int64(first.planned.recipients.count)
            state.open.removeFirst()
            moved = true
        }
        if moved, state.isDone || ContinuousClock.now - state.recorded >= .seconds(1) {
            await record(state.broadcast, finished: state.isDone)
            state.recorded = .now
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
    ) async -> Open? {
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
        return Open(window: window, planned: planned)
    }

    private static func slice(of broadcast: Broadcast) -> PartitionSlice? {
        broadcast.partition.flatMap { partition in broadcast.partitions.map { PartitionSlice(partition: partition, count: $0) } }
    }

    /// The current session's connection, waiting while there is none; nil when stopping.
    private func currentConnection() async -> AMQPConnection? {
        while !stop.isStopping {
            if let connection = connection.withLock({ $0 }) { return connection }
            guard await stop.sleep(for: .milliseconds(100)) else { return nil }
        }
        return nil
    }
}
