/// Per-user FIFO ordering with a bounded number of users in flight: a pure, synchronous state
/// machine that the worker drives from an actor.
///
/// - A user's deliveries are released strictly in the order they were enqueued, and the next
///   one only after the previous one was ``complete(_:)``d (seed 000 requirement 24: "account
///   blocked" must not overtake "invoice issued").
/// - At most ``lanes`` users have a delivery in flight at once (the seed's "number of
///   threads"); different users run concurrently.
/// - Work-conserving and fair: whenever fewer than `lanes` users are running and some user has
///   a waiting delivery, one is released; users waiting for a lane are served in the order they
///   became ready, and a user who completes and still has work goes to the back of that line.
///
/// Every operation is O(1) amortised. Not thread-safe by itself (a value type): keep it inside
/// one actor.
public struct PerUserScheduler<Item: Sendable>: Sendable {
    /// The handle of one released delivery; give it back to ``complete(_:)``.
    public struct Ticket: Sendable, Hashable, CustomStringConvertible {
        /// Arrival number, unique and increasing across all users.
        public let sequence: UInt64
        public let user: String
        public var description: String { "#\(sequence)(\(user))" }
    }

    /// A delivery that may start now.
    public struct Release: Sendable {
        public let ticket: Ticket
        public let item: Item
    }

    /// Deliveries of one user that wait behind its in-flight one (a queue with a moving head).
    private struct UserQueue: Sendable {
        var items: [(UInt64, Item)] = []
        var head = 0
        var isEmpty: Bool { head == items.count }
        var count: Int { items.count - head }

        mutating func push(_ entry: (UInt64, Item)) { items.append(entry) }

        mutating func pop() -> (UInt64, Item)? {
            guard head < items.count else { return nil }
            let entry = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return entry
        }
    }

    /// Concurrency limit: users with a delivery in flight at once (≥ 1).
    public let lanes: Int
    private var nextSequence: UInt64 = 0
    private var waiting: [String: UserQueue] = [:]
    /// user → sequence of its in-flight delivery.
    private var running: [String: UInt64] = [:]
    /// Users with waiting deliveries and nothing in flight, in the order they became ready.
    private var ready: [String] = []
    private var readyHead = 0
    private var waitingTotal = 0

    /// `lanes` below 1 is treated as 1.
    public init(lanes: Int) {
        self.lanes = max(1, lanes)
    }

    /// Users with a delivery in flight.
    public var runningCount: Int { running.count }
    /// Deliveries enqueued but not yet released.
    public var waitingCount: Int { waitingTotal }
    /// Nothing in flight and nothing waiting.
    public var isIdle: Bool { running.isEmpty && waitingTotal == 0 }
    /// Whether `user` has a delivery in flight.
    public func isRunning(user: String) -> Bool { running[user] != nil }

    /// Adds a delivery for `user`; returns the deliveries that may start now (this one, or
    /// nothing when it must wait).
    public mutating func enqueue(_ item: Item, user: String) -> [Release] {
        let sequence = nextSequence
        nextSequence += 1
        if running[user] == nil && waiting[user] == nil && running.count < lanes {
            running[user] = sequence
            return [Release(ticket: Ticket(sequence: sequence, user: user), item: item)]
        }
        let isNewWaiter = waiting[user] == nil
        waiting[user, default: UserQueue()].push((sequence, item))
        waitingTotal += 1
        if isNewWaiter && running[user] == nil {
            ready.append(user)
        }
        return []
    }

    /// Marks the in-flight delivery of `ticket` terminal and returns the deliveries that may
    /// start now. Throws ``SchedulerError`` when the ticket is not in flight (completed twice,
    /// or never released): that is a bug in the caller, reported instead of corrupting order.
    public mutating func complete(_ ticket: Ticket) throws(SchedulerError) -> [Release] {
        guard running[ticket.user] == ticket.sequence else {
            throw SchedulerError(code: .notInFlight, ticket: ticket.description)
        }
        running[ticket.user] = nil
        if waiting[ticket.user] != nil {
            ready.append(ticket.user)
        }
        return fillLanes()
    }

    private mutating func fillLanes() -> [Release] {
        var released: [Release] = []
        while running.count < lanes, readyHead < ready.count {
            let user = ready[readyHead]
            readyHead += 1
            guard var queue = waiting.removeValue(forKey: user), let (sequence, item) = queue.pop() else { continue }
            waitingTotal -= 1
            if !queue.isEmpty { waiting[user] = queue }
            running[user] = sequence
            released.append(Release(ticket: Ticket(sequence: sequence, user: user), item: item))
        }
        if readyHead == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyHead = 0
        } else if readyHead >= 64 && readyHead * 2 >= ready.count {
            ready.removeFirst(readyHead)
            readyHead = 0
        }
        return released
    }
}
