import DequeModule
import HeraldCore
import HeraldStore

/// The engine's side of the per-user backlog (``HeraldStore/DeliveryBacklog``): which users
/// have deliveries queued there, where each one's next place is, and a window of each one's
/// queued deliveries in memory. Engine-owned: only its task touches it; the engine does the
/// reads and writes these decisions ask for.
///
/// The rules:
/// - Users belong to a *scope*: the whole installation without partitions, their partition with
///   them (``scope(of:)``). A scope's backlog is held by one worker at a time: the holder of
///   ``HeraldStore/BacklogLock``, or the partition's owner.
/// - While this worker holds the user's scope (``holds(_:)``), a delivery goes to its user's backlog
///   when the user already has one, or has ``memoryAllowance`` deliveries waiting in the lanes
///   already; otherwise it goes to the lanes as before (a quiet user costs nothing here).
/// - Places are numbered in the order deliveries arrive, from one counter for all users that
///   never goes back, so the backlog keeps each user's order whatever order the writes end in,
///   and a user whose backlog ended and begins again never takes a place whose row is still
///   there (a sent delivery's row goes only when its record is durable).
/// - A queued delivery goes to the lanes only once its row is durable, and one at a time: when
///   its user has nothing else there (the engine asks for `room` 1 then). A user's backlog costs
///   the lanes one delivery, whatever its length.
/// - Durable deliveries stay in memory up to ``windowSize`` per user and ``memoryBudget`` for
///   all users together; past that they are dropped and read back in order, a window at a time,
///   when the user gets there. At most ``readConcurrency`` users' reads are under way at once
///   (the engine sends them ``readBatch`` to a query), and what they may bring counts against
///   the budget from their start; a read finds room for at least one delivery, so no user
///   starves while others' windows fill the budget (their provider may be down).
/// - A user's backlog ends when nothing of it is left in memory, in the database, being written
///   or in the lanes (a delivery waiting there for its breaker holds it open: the user's next
///   one queues behind it instead of waiting in memory); the user's next delivery goes to the
///   lanes again.
struct UserBacklogs {
    /// One user's backlog (per platform).
    private struct Order {
        let scope: Int
        /// Durable, in place order, not yet handed to the lanes.
        var window: Deque<Delivery> = []
        /// The last place taken into the window (written or read back): reads continue after it.
        var readUpTo: Int64
        /// The last place durable in the database but not kept in memory.
        var droppedUpTo: Int64?
        /// Deliveries of this user being written.
        var writing = 0
        var reading = false
        /// The deliveries the read under way may bring (reserved in the budget).
        var readLimit = 0
        /// In ``UserBacklogs/waitingForRead``.
        var waitsForRead = false
        /// The next read's first delivery may have been sent just before this worker took the
        /// backlog over (a crash, a lost lock): ask before sending it again.
        var headInDoubt = false

        /// Whether durable deliveries wait in the database only.
        var hasDropped: Bool { droppedUpTo.map { $0 > readUpTo } ?? false }
        var isDone: Bool { window.isEmpty && !hasDropped && writing == 0 && !reading }
    }

    /// A read the engine should start.
    struct Read {
        let user: OrderingKey
        let after: Int64
        /// Deliveries to read at most.
        let limit: Int
        let inDoubt: Bool
    }

    /// Users' reads under way at most.
    static let readConcurrency = 1_024
    /// Users' reads per query.
    static let readBatch = 256

    let memoryAllowance: Int
    let windowSize: Int
    let memoryBudget: Int
    /// `worker.partitions`; 0: one scope for all users.
    let partitions: Int
    /// How this worker holds a scope (absent: not at all). Held: its deliveries are queued and
    /// sent. Leaving (its partition is being handed over): queued still, so that its messages
    /// settle, but no more sent (``hasLeft(scope:)``). Suspended (the lock was lost and may come
    /// back): what is known stays, nothing is sent or queued, and its users' new deliveries wait
    /// (``holdsBack(_:)``).
    enum Holding { case held, leaving, suspended }
    private var holdings: [Int: Holding] = [:]
    /// The place the next queued delivery takes (any user).
    private var nextSeq: Int64 = 1
    private var orders: [OrderingKey: Order] = [:]
    /// The place of each user's queued delivery in the lanes here (sent, parked for a retry or
    /// its breaker), not terminal yet: the user's next delivery must still queue behind it, and
    /// its row is still in the table. Kept when the user's scope is forgotten, because the
    /// delivery is still this worker's: a scope taken back reads on after it, not it again.
    private var inLanes: [OrderingKey: Int64] = [:]
    /// Deliveries in all windows.
    private(set) var inMemory = 0
    private var readsUnderWay = 0
    /// What the reads under way may bring, at most.
    private var reserved = 0
    /// Users whose read waits for one of the ``readConcurrency`` reads.
    private var waitingForRead: Deque<OrderingKey> = []

    init(memoryAllowance: Int, windowSize: Int, memoryBudget: Int = .max, partitions: Int = 0) {
        self.memoryAllowance = max(1, memoryAllowance)
        self.windowSize = max(1, windowSize)
        self.memoryBudget = max(1, memoryBudget)
        self.partitions = max(0, partitions)
    }

    /// The scope of `user`: 0 without partitions, else the user's partition.
    func scope(of user: OrderingKey) -> Int { Self.scope(of: user, partitions: partitions) }

    static func scope(of user: OrderingKey, partitions: Int) -> Int {
        partitions == 0 ? 0 : PartitionHash.partition(ofUser: user.userId, count: partitions)
    }

    /// How this worker holds `user`'s scope (nil: not at all).
    func holding(_ user: OrderingKey) -> Holding? {
        if let order = orders[user] { return holdings[order.scope] }
        return holdings.isEmpty ? nil : holdings[scope(of: user)]
    }

    /// Whether this worker sends `user`'s queued deliveries (holds its scope, not leaving it).
    func holds(_ user: OrderingKey) -> Bool { holding(user) == .held }

    /// Whether `user`'s deliveries may be queued here: its scope is held, or being left.
    func queues(_ user: OrderingKey) -> Bool {
        switch holding(user) {
        case .held, .leaving: true
        case .suspended, nil: false
        }
    }

    /// Whether this worker holds any scope.
    var holdsAny: Bool { !holdings.isEmpty }

    /// Users of a scope being left that had a delivery in the lanes then (``leave(scope:)``).
    private var leavingInLanes: [Int: Set<OrderingKey>] = [:]
    /// Terminal records of queued deliveries not durable yet, per scope: their rows are still
    /// in the table, so a handover waits for them (held or not: a record ends either way).
    private var recording: [Int: Int] = [:]

    /// Users with a backlog.
    var count: Int { orders.count }
    var users: [OrderingKey] { Array(orders.keys) }

    /// Whether a new delivery of `user` must wait in memory: the backlog is suspended and the
    /// user has deliveries queued, which go first.
    func holdsBack(_ user: OrderingKey) -> Bool { has(user) && holding(user) == .suspended }

    func has(_ user: OrderingKey) -> Bool { !orders.isEmpty && orders[user] != nil }

    /// Whether a new delivery of `user`, who has `waiting` deliveries waiting in the lanes, goes
    /// to the backlog. Looks nothing up while no user has a backlog and the user waits for
    /// fewer than ``memoryAllowance`` (a quiet worker's every delivery).
    func takes(_ user: OrderingKey, waiting: @autoclosure () -> Int) -> Bool {
        holdsAny && (has(user) || waiting() >= memoryAllowance) && queues(user)
    }

    /// The place of a delivery queued now (its write begins).
    mutating func place(for user: OrderingKey) -> BacklogPlace {
        var order = orders[user] ?? Order(scope: scope(of: user), readUpTo: 0)
        let seq = nextSeq
        nextSeq += 1
        order.writing += 1
        orders[user] = order
        return BacklogPlace(orderKey: Self.text(user), seq: seq)
    }

    /// Deliveries whose rows are durable now, in place order per user: kept in their user's
    /// window while it has room and nothing before them was dropped; dropped otherwise.
    mutating func written(_ deliveries: [Delivery]) {
        for delivery in deliveries {
            let user = delivery.recipient.orderingKey
            guard var order = orders[user], let seq = delivery.backlogPlace?.seq else { continue }
            order.writing -= 1
            if !order.hasDropped, order.window.count < windowSize, inMemory < memoryBudget, seq > order.readUpTo {
                order.window.append(delivery)
                inMemory += 1
                order.readUpTo = seq
            } else {
                order.droppedUpTo = max(order.droppedUpTo ?? seq, seq)
            }
            orders[user] = order
        }
    }

    /// Deliveries whose write failed (the worker is aborting): their places stay unused.
    mutating func notWritten(_ deliveries: [Delivery]) {
        for delivery in deliveries {
            orders[delivery.recipient.orderingKey]?.writing -= 1
        }
    }

    /// Up to `room` of `user`'s queued deliveries, in order, for the lanes (none unless this
    /// worker ``holds(_:)`` the user's scope).
    mutating func take(for user: OrderingKey, room: Int) -> [Delivery] {
        guard room > 0, var order = orders[user], !order.window.isEmpty, holdings[order.scope] == .held else { return [] }
        var taken: [Delivery] = []
        while taken.count < room, let next = order.window.popFirst() { taken.append(next) }
        inMemory -= taken.count
        if let last = taken.last?.backlogPlace?.seq { inLanes[user] = last }
        orders[user] = order
        return taken
    }

    /// `user`'s delivery taken into the lanes ended there (its outcome is terminal).
    mutating func leftTheLanes(_ user: OrderingKey) {
        if !inLanes.isEmpty { inLanes[user] = nil }
    }

    /// The read `user` needs now (its window is empty and deliveries wait in the database), if
    /// none is under way and one of the ``readConcurrency`` reads is free (else the user waits
    /// for one: ``usersWaitingForRead()``); marks it under way.
    mutating func readNeeded(for user: OrderingKey) -> Read? {
        guard var order = orders[user], order.window.isEmpty, order.hasDropped, !order.reading, holdings[order.scope] == .held else {
            return nil
        }
        guard readsUnderWay < Self.readConcurrency else {
            if !order.waitsForRead {
                orders[user]?.waitsForRead = true
                waitingForRead.append(user)
            }
            return nil
        }
        order.reading = true
        readsUnderWay += 1
        let limit = min(windowSize, max(1, memoryBudget - inMemory - reserved))
        reserved += limit
        order.readLimit = limit
        let read = Read(user: user, after: order.readUpTo, limit: limit, inDoubt: order.headInDoubt)
        order.headInDoubt = false
        orders[user] = order
        return read
    }

    /// Users whose read waited and may start now (as many as reads are free), removed from the
    /// wait: look at them again.
    mutating func usersWaitingForRead() -> [OrderingKey] {
        var users: [OrderingKey] = []
        while users.count < Self.readConcurrency - readsUnderWay, let user = waitingForRead.popFirst() {
            orders[user]?.waitsForRead = false
            users.append(user)
        }
        return users
    }

    /// A read ended: `deliveries` (in order) join the window; `upTo` is the last place read
    /// (nil: nothing left after the read's start).
    mutating func read(for user: OrderingKey, _ deliveries: [Delivery], upTo: Int64?) {
        // A read started before the backlog was lost (and maybe taken again) is not this one's.
        guard var order = orders[user], order.reading else { return }
        order.reading = false
        readsUnderWay -= 1
        reserved -= order.readLimit
        order.window.append(contentsOf: deliveries)
        inMemory += deliveries.count
        if let upTo {
            order.readUpTo = max(order.readUpTo, upTo)
        } else if let dropped = order.droppedUpTo {
            // Nothing after `readUpTo`: what was dropped was recorded meanwhile by another copy.
            order.readUpTo = max(order.readUpTo, dropped)
        }
        orders[user] = order
    }

    /// A read failed (the worker is stopping): tried again when the user is looked at next.
    mutating func readFailed(for user: OrderingKey) {
        guard let order = orders[user], order.reading else { return }
        orders[user]?.reading = false
        readsUnderWay -= 1
        reserved -= order.readLimit
    }

    /// Forgets `user`'s backlog if nothing of it is left; true if it did.
    @discardableResult
    mutating func endIfDone(_ user: OrderingKey) -> Bool {
        guard let order = orders[user], order.isDone, inLanes[user] == nil else { return false }
        orders[user] = nil
        return true
    }

    /// This worker took `scope`'s backlog: these users (of that scope) have deliveries queued up
    /// to these places. The first of each may have been sent by the previous holder just before
    /// it went. A user whose delivery is still in the lanes here (the scope was taken back
    /// before its outcome) reads on after that delivery's place: its row is read again only once
    /// its record is durable, so it cannot go out twice from this worker.
    mutating func acquired(_ queued: [(user: OrderingKey, lastSeq: Int64)], scope: Int = 0) {
        // Taken after another holder (or for the first time): what this worker knew may be stale.
        forget(scope: scope)
        holdings[scope] = .held
        for (user, lastSeq) in queued {
            var order = orders[user] ?? Order(scope: scope, readUpTo: inLanes[user] ?? 0)
            nextSeq = max(nextSeq, lastSeq + 1)
            order.droppedUpTo = max(order.droppedUpTo ?? lastSeq, lastSeq)
            order.headInDoubt = true
            orders[user] = order
        }
    }

    /// This worker lost `scope`'s lock and may take it back: nothing is sent or queued meanwhile.
    mutating func suspend(scope: Int = 0) {
        holdings[scope] = .suspended
    }

    /// This worker took `scope`'s lock back and nobody held it meanwhile.
    mutating func resume(scope: Int = 0) {
        holdings[scope] = .held
    }

    /// `scope`'s partition is being handed over: its deliveries are still queued (its messages
    /// must settle), none sent; no more go to the lanes, so those there now are the last.
    mutating func leave(scope: Int) {
        if holdings[scope] != nil { holdings[scope] = .leaving }
        let partitions = partitions
        leavingInLanes[scope] = Set(inLanes.keys.filter { Self.scope(of: $0, partitions: partitions) == scope })
    }

    /// Whether nothing of `scope`'s backlog is in the lanes here any more, since ``leave(scope:)``,
    /// and every record of what was sent is durable (writes under way are its messages', which
    /// the handover waits for). Looks only at the users that were in the lanes then.
    mutating func hasLeft(scope: Int) -> Bool {
        guard var users = leavingInLanes[scope] else { return true }
        if !users.isEmpty {
            users = users.filter { inLanes[$0] != nil }
            leavingInLanes[scope] = users
        }
        return users.isEmpty && recording[scope] == nil
    }

    /// Whether a scope is being left and not yet reported left (``takeLeftScopes()``).
    var isLeaving: Bool { !leavingInLanes.isEmpty }

    /// The scopes being left that ``hasLeft(scope:)`` now, each reported once.
    mutating func takeLeftScopes() -> [Int] {
        let done = leavingInLanes.keys.filter { hasLeft(scope: $0) }
        for scope in done { leavingInLanes[scope] = nil }
        return done
    }

    /// A queued delivery's terminal record is on its way to the journal.
    mutating func recordQueued(for user: OrderingKey) {
        recording[scope(of: user), default: 0] += 1
    }

    /// That record is durable (or given up: the worker is aborting).
    mutating func recordDone(for user: OrderingKey) {
        let scope = scope(of: user)
        let left = (recording[scope] ?? 1) - 1
        recording[scope] = left > 0 ? left : nil
    }

    /// Another worker holds `scope`'s backlog (or will): whoever it is sends what is queued.
    /// Writes under way finish (their messages are acknowledged: the rows exist); deliveries in
    /// the lanes stay known (``inLanes``). Returns the deliveries that were in its windows.
    @discardableResult
    mutating func forget(scope: Int = 0) -> [Delivery] {
        holdings[scope] = nil
        leavingInLanes[scope] = nil
        var dropped: [Delivery] = []
        for (user, order) in orders where order.scope == scope {
            dropped += order.window
            inMemory -= order.window.count
            if order.reading {
                readsUnderWay -= 1
                reserved -= order.readLimit
            }
            orders[user] = nil
        }
        if !waitingForRead.isEmpty { waitingForRead.removeAll { orders[$0] == nil } }
        return dropped
    }

    /// The backlog's key text of a user and platform: the platform first, so that any user id
    /// (which may hold any character) parses back.
    static func text(_ user: OrderingKey) -> String { "\(user.platform.rawValue):\(user.userId)" }

    static func user(_ text: String) -> OrderingKey? {
        guard let colon = text.firstIndex(of: ":"), let platform = Platform(rawValue: String(text[..<colon])) else { return nil }
        return OrderingKey(userId: String(text[text.index(after: colon)...]), platform: platform)
    }
}
