import DequeModule

/// Per-user FIFO ordering with a bounded number of lanes: a pure, synchronous state machine that
/// the worker drives from one task. `Key` names whose deliveries must stay in order (the worker
/// uses a user and a platform); the documentation says "user" for it.
///
/// - A user's deliveries are released strictly in the order they were enqueued, and the next
///   one only after the previous one was ``complete(_:)``d (seed 000 requirement 24: "account
///   blocked" must not overtake "invoice issued").
/// - At most ``lanes`` deliveries are being sent at once (the seed's "number of threads");
///   different users run concurrently.
/// - A delivery that waits for a retry is ``park(_:)``ed: its user stays blocked (its later
///   deliveries still wait, so order holds) but its lane goes to someone else; when its time
///   comes it is ``resume(_:item:)``d and takes the next free lane before anyone else.
/// - Work-conserving and fair: whenever a lane is free and some user that is not blocked has a
///   waiting delivery, one is released; users waiting for a lane are served in the order they
///   became ready, and a user who completes and still has work goes to the back of that line.
/// - *Bulk* deliveries (a broadcast's) wait in a line of their own: a user whose next delivery
///   is bulk gets a free lane after the users whose next one is not, except every
///   ``bulkShare``-th lane, which goes to the bulk line first, so that a broadcast never starves
///   and never makes a targeted push wait for its thousands of deliveries.
///
/// Every operation is O(1) amortised. Not thread-safe by itself (a value type). Inlinable, so
/// that the worker's use of it is specialized for its item type (no generic dispatch per
/// delivery).
public struct PerUserScheduler<Key: Hashable & Sendable, Item> {
    /// The handle of one released delivery; give it back to ``complete(_:)`` or ``park(_:)``.
    public struct Ticket: Sendable, Hashable, CustomStringConvertible {
        /// Arrival number, unique and increasing across all users.
        public let sequence: UInt64
        public let user: Key
        public var description: String { "#\(sequence)(\(user))" }

        @inlinable
        init(sequence: UInt64, user: Key) {
            self.sequence = sequence
            self.user = user
        }
    }

    /// A delivery that may start now.
    public struct Release {
        public let ticket: Ticket
        public let item: Item

        @inlinable
        init(ticket: Ticket, item: Item) {
            self.ticket = ticket
            self.item = item
        }
    }

    /// Concurrency limit: deliveries being sent at once (≥ 1).
    public let lanes: Int
    @usableFromInline var nextSequence: UInt64 = 0
    /// Deliveries of each user waiting behind its blocked one.
    @usableFromInline var waiting: [Key: Deque<(UInt64, Item)>] = [:]
    /// user → sequence of its delivery in flight or parked: the user is blocked.
    @usableFromInline var blocked: [Key: UInt64] = [:]
    /// Users whose blocked delivery is parked (holds no lane).
    @usableFromInline var parked: Set<Key> = []
    /// Parked deliveries whose time has come, waiting for a lane (served first).
    @usableFromInline var resuming: Deque<Release> = []
    /// Users with waiting deliveries and nothing blocked, in the order they became ready: those
    /// whose next delivery is bulk in ``readyBulk``, the others in ``ready``.
    @usableFromInline var ready: Deque<Key> = []
    @usableFromInline var readyBulk: Deque<Key> = []
    /// Sequences of the waiting bulk deliveries.
    @usableFromInline var bulk: Set<UInt64> = []
    /// Lanes given since the bulk line last had one.
    @usableFromInline var sinceBulk = 0
    /// One lane in this many goes to the bulk line first when both lines wait.
    public static var bulkShare: Int { 4 }
    @usableFromInline var waitingTotal = 0

    /// `lanes` below 1 is treated as 1.
    @inlinable
    public init(lanes: Int) {
        self.lanes = max(1, lanes)
    }

    /// Deliveries holding a lane (released and not parked).
    @inlinable
    public var runningCount: Int { blocked.count - parked.count }
    /// Deliveries waiting for their retry (parked, or resumed and waiting for a lane).
    @inlinable
    public var parkedCount: Int { parked.count }
    /// Deliveries enqueued but not yet released.
    @inlinable
    public var waitingCount: Int { waitingTotal }
    /// Nothing in flight, parked or waiting.
    @inlinable
    public var isIdle: Bool { blocked.isEmpty && waitingTotal == 0 }
    /// Whether `user` has a delivery in flight or parked.
    @inlinable
    public func isRunning(user: Key) -> Bool { blocked[user] != nil }
    /// Deliveries of `user` enqueued and not yet released (behind its blocked one, or waiting
    /// for a lane).
    @inlinable
    public func waitingCount(user: Key) -> Int { waiting[user]?.count ?? 0 }

    /// Adds a delivery for `user`; returns the deliveries that may start now (this one, or
    /// nothing when it must wait).
    @inlinable
    public mutating func enqueue(_ item: Item, user: Key, isBulk: Bool = false) -> [Release] {
        var released: [Release] = []
        enqueue(item, user: user, isBulk: isBulk, into: &released)
        return released
    }

    /// Adds a delivery for `user`, appending what may start now to `released`.
    ///
    /// `isBulk`: a broadcast's delivery, which waits for a lane behind the others.
    @inlinable
    public mutating func enqueue(_ item: Item, user: Key, isBulk: Bool = false, into released: inout [Release]) {
        let sequence = nextSequence
        nextSequence += 1
        // The common case in two lookups of the user (a lane is free, the user has nothing in
        // flight or waiting): the checks that hash nothing first, and the user blocked and
        // tested in one step (put back if it was blocked already).
        if runningCount < lanes && resuming.isEmpty && waiting[user] == nil {
            guard let running = blocked.updateValue(sequence, forKey: user) else {
                released.append(Release(ticket: Ticket(sequence: sequence, user: user), item: item))
                return
            }
            blocked[user] = running
        }
        if isBulk { bulk.insert(sequence) }
        if waiting[user] == nil {
            waiting[user] = [(sequence, item)]
            if blocked[user] == nil { becomeReady(user, next: sequence) }
        } else {
            waiting[user]!.append((sequence, item))
        }
        waitingTotal += 1
    }

    /// Marks the delivery of `ticket` (in flight or parked) terminal and returns the deliveries
    /// that may start now. Throws ``SchedulerError`` when the ticket is not its user's blocked
    /// one (completed twice, or never released): a bug in the caller, reported instead of
    /// corrupting order.
    @inlinable
    public mutating func complete(_ ticket: Ticket) throws(SchedulerError) -> [Release] {
        var released: [Release] = []
        try complete(ticket, into: &released)
        return released
    }

    /// ``complete(_:)``, appending what may start now to `released`.
    @inlinable
    public mutating func complete(_ ticket: Ticket, into released: inout [Release]) throws(SchedulerError) {
        // Unblocked and tested in one lookup (put back if the ticket was not the blocked one).
        let running = blocked.removeValue(forKey: ticket.user)
        guard running == ticket.sequence else {
            if let running { blocked[ticket.user] = running }
            throw SchedulerError(code: .notInFlight, ticket: ticket.description)
        }
        if !parked.isEmpty, parked.remove(ticket.user) != nil {
            // A parked delivery ended without resuming (given up): it may sit in `resuming`.
            if let index = resuming.firstIndex(where: { $0.ticket == ticket }) { resuming.remove(at: index) }
        }
        if waitingTotal > 0, let next = waiting[ticket.user]?.first { becomeReady(ticket.user, next: next.0) }
        fillLanes(into: &released)
    }

    /// The in-flight delivery of `ticket` waits for a retry: its lane is given to others, its
    /// user stays blocked. Returns the deliveries that may start now.
    @inlinable
    public mutating func park(_ ticket: Ticket) throws(SchedulerError) -> [Release] {
        guard blocked[ticket.user] == ticket.sequence, !parked.contains(ticket.user) else {
            throw SchedulerError(code: .notInFlight, ticket: ticket.description)
        }
        parked.insert(ticket.user)
        var released: [Release] = []
        fillLanes(into: &released)
        return released
    }

    /// The parked delivery of `ticket` may be sent again: released now (same ticket) if a lane
    /// is free, else ahead of every waiting user when one frees.
    @inlinable
    public mutating func resume(_ ticket: Ticket, item: Item) throws(SchedulerError) -> [Release] {
        guard blocked[ticket.user] == ticket.sequence, parked.contains(ticket.user),
            !resuming.contains(where: { $0.ticket == ticket })
        else {
            throw SchedulerError(code: .notInFlight, ticket: ticket.description)
        }
        resuming.append(Release(ticket: ticket, item: item))
        var released: [Release] = []
        fillLanes(into: &released)
        return released
    }

    /// Removes and returns `user`'s waiting deliveries, in order (they move elsewhere, e.g. to a
    /// durable backlog behind the user's blocked one); its blocked delivery, if any, stays.
    @inlinable
    public mutating func removeWaiting(user: Key) -> [Item] {
        guard let queue = waiting.removeValue(forKey: user) else { return [] }
        waitingTotal -= queue.count
        if blocked[user] == nil {
            if let index = ready.firstIndex(of: user) {
                ready.remove(at: index)
            } else if let index = readyBulk.firstIndex(of: user) {
                readyBulk.remove(at: index)
            }
        }
        if !bulk.isEmpty { for (sequence, _) in queue { bulk.remove(sequence) } }
        return queue.map(\.1)
    }

    @inlinable
    mutating func fillLanes(into released: inout [Release]) {
        while runningCount < lanes, let release = resuming.popFirst() {
            parked.remove(release.ticket.user)
            released.append(release)
        }
        while runningCount < lanes, let user = nextReady() {
            guard var queue = waiting.removeValue(forKey: user), let (sequence, item) = queue.popFirst() else { continue }
            waitingTotal -= 1
            if !bulk.isEmpty { bulk.remove(sequence) }
            if !queue.isEmpty { waiting[user] = queue }
            blocked[user] = sequence
            released.append(Release(ticket: Ticket(sequence: sequence, user: user), item: item))
        }
    }

    /// `user`, unblocked with waiting deliveries, joins the line of its next one (`next`).
    @inlinable
    mutating func becomeReady(_ user: Key, next: UInt64) {
        if !bulk.isEmpty, bulk.contains(next) {
            readyBulk.append(user)
        } else {
            ready.append(user)
        }
    }

    /// The user whose turn it is: the targeted line first, but every ``bulkShare``-th lane the
    /// bulk line's.
    @inlinable
    mutating func nextReady() -> Key? {
        if readyBulk.isEmpty { return ready.popFirst() }
        if ready.isEmpty || sinceBulk + 1 >= Self.bulkShare {
            sinceBulk = 0
            return readyBulk.popFirst()
        }
        sinceBulk += 1
        return ready.popFirst()
    }
}

extension PerUserScheduler: Sendable where Item: Sendable {}
extension PerUserScheduler.Release: Sendable where Item: Sendable {}
