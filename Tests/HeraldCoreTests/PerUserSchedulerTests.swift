import PropertyBased
import Testing

@testable import HeraldCore

@Suite struct PerUserSchedulerTests {
    typealias Scheduler = PerUserScheduler<String, String>

    @Test func oneInFlightPerUserInArrivalOrder() throws {
        var s = Scheduler(lanes: 4)
        #expect(s.enqueue("a1", user: "a").map(\.item) == ["a1"])
        #expect(s.enqueue("a2", user: "a").isEmpty)
        #expect(s.enqueue("b1", user: "b").map(\.item) == ["b1"])
        #expect(s.enqueue("a3", user: "a").isEmpty)
        #expect(s.runningCount == 2)
        #expect(s.waitingCount == 2)
        #expect(s.isRunning(user: "a"))
        let a1 = Scheduler.Ticket(sequence: 0, user: "a")
        let next = try s.complete(a1)
        #expect(next.map(\.item) == ["a2"])
        #expect(throws: SchedulerError.self) { try s.complete(a1) }
        #expect(try s.complete(next[0].ticket).map(\.item) == ["a3"])
    }

    @Test func lanesBoundTheUsersInFlightAndFreedLanesGoToWaitingUsersInOrder() throws {
        var s = Scheduler(lanes: 2)
        let a = s.enqueue("a1", user: "a")
        let b = s.enqueue("b1", user: "b")
        #expect(s.enqueue("c1", user: "c").isEmpty)
        #expect(s.enqueue("d1", user: "d").isEmpty)
        #expect(s.enqueue("a2", user: "a").isEmpty)
        #expect(s.runningCount == 2)
        // a finishes: c waited longer than a's next delivery, so c goes first.
        #expect(try s.complete(a[0].ticket).map(\.item) == ["c1"])
        #expect(try s.complete(b[0].ticket).map(\.item) == ["d1"])
        let c = try #require(s.isRunning(user: "c") ? Scheduler.Ticket(sequence: 2, user: "c") : nil)
        #expect(try s.complete(c).map(\.item) == ["a2"])
        #expect(!s.isIdle)
    }

    @Test func removedWaitingDeliveriesLeaveTheUserBlockedAndNeverComeBack() throws {
        var s = Scheduler(lanes: 1)
        let a1 = s.enqueue("a1", user: "a")
        #expect(s.enqueue("a2", user: "a").isEmpty)
        #expect(s.enqueue("a3", user: "a").isEmpty)
        #expect(s.enqueue("b1", user: "b").isEmpty)
        #expect(s.removeWaiting(user: "a") == ["a2", "a3"])
        #expect(s.removeWaiting(user: "a").isEmpty)
        #expect(s.waitingCount == 1)
        #expect(s.isRunning(user: "a"))
        // a's lane goes to b; a's later delivery waits behind nothing but the lane.
        #expect(try s.complete(a1[0].ticket).map(\.item) == ["b1"])
        #expect(s.enqueue("a4", user: "a").isEmpty)
        // A user waiting for a lane (ready, nothing in flight) is taken out of the line too: it
        // is served once, not twice, when it has work again.
        #expect(s.removeWaiting(user: "a") == ["a4"])
        #expect(s.enqueue("a5", user: "a").isEmpty)
        #expect(s.enqueue("a6", user: "a").isEmpty)
        let next = try s.complete(Scheduler.Ticket(sequence: 3, user: "b"))
        #expect(next.map(\.item) == ["a5"])
        #expect(s.runningCount == 1 && s.waitingCount == 1)
    }

    /// A broadcast's thousands of deliveries wait in the bulk line: a targeted push gets the
    /// next free lane before them.
    @Test func aTargetedDeliveryGoesBeforeWaitingBulkOnes() throws {
        var s = Scheduler(lanes: 1)
        let first = s.enqueue("b0", user: "b0", isBulk: true)
        for n in 1...5 { #expect(s.enqueue("b\(n)", user: "b\(n)", isBulk: true).isEmpty) }
        #expect(s.enqueue("t", user: "t").isEmpty)
        let next = try s.complete(first[0].ticket)
        #expect(next.map(\.item) == ["t"])
        #expect(try s.complete(next[0].ticket).map(\.item) == ["b1"])
    }

    /// Every ``PerUserScheduler/bulkShare``-th lane goes to the bulk line while targeted users
    /// wait too: a broadcast is slowed, never stopped.
    @Test func theBulkLineGetsOneLaneInBulkShare() throws {
        var s = Scheduler(lanes: 1)
        var running = s.enqueue("t0", user: "t0")
        for n in 1...3 { _ = s.enqueue("b\(n)", user: "b\(n)", isBulk: true) }
        for n in 1...12 { _ = s.enqueue("t\(n)", user: "t\(n)") }
        var order: [String] = []
        for _ in 0..<8 {
            running = try s.complete(running[0].ticket)
            order.append(running[0].item)
        }
        #expect(order == ["t1", "t2", "t3", "b1", "t4", "t5", "t6", "b2"])
    }

    /// A user's own order holds across the two lines: its targeted delivery behind its bulk one
    /// waits for it, and removing a bulk-ready user's deliveries takes it out of the bulk line.
    @Test func aUsersOrderHoldsAcrossTheLines() throws {
        var s = Scheduler(lanes: 1)
        let first = s.enqueue("x", user: "x")
        #expect(s.enqueue("u-bulk", user: "u", isBulk: true).isEmpty)
        #expect(s.enqueue("u-targeted", user: "u").isEmpty)
        #expect(s.enqueue("v-bulk", user: "v", isBulk: true).isEmpty)
        let next = try s.complete(first[0].ticket)
        #expect(next.map(\.item) == ["u-bulk"])
        #expect(s.removeWaiting(user: "v") == ["v-bulk"])
        #expect(try s.complete(next[0].ticket).map(\.item) == ["u-targeted"])
        #expect(s.waitingCount == 0)
    }

    @Test func zeroLanesMeansOne() {
        var s = Scheduler(lanes: 0)
        #expect(s.lanes == 1)
        #expect(s.enqueue("a", user: "a").count == 1)
        #expect(s.enqueue("b", user: "b").isEmpty)
    }

    @Test func unknownTicketIsAnError() {
        var s = Scheduler(lanes: 1)
        do {
            _ = try s.complete(.init(sequence: 9, user: "x"))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .notInFlight)
        }
    }

    /// Random interleavings of enqueue and complete over many users and lane counts. After every
    /// step: at most one delivery in flight per user, at most `lanes` users in flight, no lane
    /// idle while a user that is not running has work; over the run: each user's deliveries
    /// are released in arrival order, and every delivery is released exactly once.
    @Test func randomInterleavingsKeepOrderAndLoseNothing() async {
        await propertyCheck(count: 400, input: Gen.int(in: 1...6), Gen.int(in: 1...12), Gen.int(in: 0...Int.max)) { lanes, users, seed in
            var rng = SplitMix64(seed: UInt64(seed))
            var s = PerUserScheduler<String, Int>(lanes: lanes)
            var enqueued: [String: [Int]] = [:]
            var released: [String: [Int]] = [:]
            var inFlight: [String] = []
            var ticketsByUser: [String: PerUserScheduler<String, Int>.Ticket] = [:]
            var nextItem = 0
            var steps = 0
            func accept(_ releases: [PerUserScheduler<String, Int>.Release]) {
                for r in releases {
                    #expect(ticketsByUser[r.ticket.user] == nil, "second delivery in flight for \(r.ticket.user)")
                    ticketsByUser[r.ticket.user] = r.ticket
                    released[r.ticket.user, default: []].append(r.item)
                    inFlight.append(r.ticket.user)
                }
            }
            func checkInvariants() {
                #expect(s.runningCount == ticketsByUser.count)
                #expect(s.runningCount <= lanes)
                let pendingUsers = Set(enqueued.keys.filter { (enqueued[$0]?.count ?? 0) > (released[$0]?.count ?? 0) })
                let readyUsers = pendingUsers.subtracting(ticketsByUser.keys)
                if !readyUsers.isEmpty { #expect(s.runningCount == lanes, "a lane is idle while \(readyUsers) wait") }
            }
            let total = Int.random(in: 1...300, using: &rng)
            while nextItem < total || !inFlight.isEmpty {
                steps += 1
                let enqueue = nextItem < total && (inFlight.isEmpty || Int.random(in: 0..<3, using: &rng) > 0)
                if enqueue {
                    let user = "u\(Int.random(in: 0..<users, using: &rng))"
                    enqueued[user, default: []].append(nextItem)
                    accept(s.enqueue(nextItem, user: user))
                    nextItem += 1
                } else {
                    let index = Int.random(in: 0..<inFlight.count, using: &rng)
                    let user = inFlight.remove(at: index)
                    let ticket = ticketsByUser.removeValue(forKey: user)!
                    do {
                        accept(try s.complete(ticket))
                    } catch {
                        Issue.record("complete failed: \(error)")
                    }
                }
                checkInvariants()
            }
            #expect(s.isIdle)
            #expect(s.waitingCount == 0)
            #expect(released == enqueued, "per-user order or completeness broken")
            #expect(steps <= 2 * total)
        }
    }
}
