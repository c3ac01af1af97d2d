import Foundation
import HeraldCore
import HeraldStore
import Testing

@testable import HeraldWorker

/// The engine's backlog rules (``UserBacklogs``), in process: no broker, no database.
@Suite("User backlogs")
struct UserBacklogsTests {
    private let alice = OrderingKey(userId: "alice", platform: .ios)
    private let bob = OrderingKey(userId: "bob", platform: .ios)

    private func delivery(_ user: OrderingKey, position: Int64) -> Delivery {
        let event = Event(id: "E", type: .message, dateTime: EventTimestamp(date: Date()), filters: [], params: [])
        let context = MessageContext(event: event, metadata: .defaults(for: "E"), key: MessageKey(text: "m\(position)"), journalId: position, publishedAt: nil)
        let subscription = Subscription(
            deviceId: "d-\(user.userId)", token: "t", platform: user.platform, userId: user.userId, culture: "ru-RU", deviceRef: 1)
        let rendered = RenderedNotification(
            eventId: "E", culture: "ru-RU", platform: user.platform, title: "", body: "b", metadata: .defaults(for: "E"), isSilent: false)
        return Delivery(
            context: context, recipient: Recipient(subscription: subscription, addressedUserId: user.userId), rendered: rendered, deviceRef: 1,
            position: position, inDoubt: false, attempts: 0, hasPendingRow: false)
    }

    /// Queues `count` deliveries of `user` the way the engine does: a place each, then written.
    private func queue(_ count: Int, of user: OrderingKey, into backlogs: inout UserBacklogs, from first: Int64 = 1) -> [Delivery] {
        let deliveries = (0..<Int64(count)).map { delivery(user, position: first + $0) }
        for delivery in deliveries { delivery.backlogPlace = backlogs.place(for: user) }
        backlogs.written(deliveries)
        return deliveries
    }

    @Test func aQuietUserGoesToTheLanesAndABusyOneToTheBacklog() {
        var backlogs = UserBacklogs(memoryAllowance: 4, windowSize: 8)
        #expect(!backlogs.takes(alice, waiting: 10), "nothing is queued before this worker holds the backlog")
        backlogs.acquired([])
        #expect(!backlogs.takes(alice, waiting: 0))
        #expect(!backlogs.takes(alice, waiting: 3))
        #expect(backlogs.takes(alice, waiting: 4))
        _ = backlogs.place(for: alice)
        #expect(backlogs.takes(alice, waiting: 0), "behind its queued ones, whatever waits in memory")
        #expect(!backlogs.takes(bob, waiting: 0))
    }

    @Test func queuedDeliveriesComeBackInPlaceOrderAndTheBacklogEnds() {
        var backlogs = UserBacklogs(memoryAllowance: 2, windowSize: 8)
        backlogs.acquired([])
        let queued = queue(5, of: alice, into: &backlogs)
        #expect(queued.map { $0.backlogPlace?.seq } == [1, 2, 3, 4, 5])
        var taken: [Delivery] = []
        while case let next = backlogs.take(for: alice, room: 2), !next.isEmpty { taken += next }
        #expect(taken.map(\.position) == [1, 2, 3, 4, 5])
        let none = backlogs.readNeeded(for: alice)
        #expect(none == nil, "everything was in memory")
        let open = !backlogs.endIfDone(alice)
        #expect(open, "the last one is still in the lanes: alice's next delivery queues behind it")
        backlogs.leftTheLanes(alice)
        let ended = backlogs.endIfDone(alice)
        #expect(ended)
        #expect(!backlogs.has(alice))
    }

    @Test func aWriteUnderWayKeepsTheBacklogOpen() {
        var backlogs = UserBacklogs(memoryAllowance: 2, windowSize: 8)
        backlogs.acquired([])
        let pending = delivery(alice, position: 1)
        pending.backlogPlace = backlogs.place(for: alice)
        let open = !backlogs.endIfDone(alice)
        #expect(open, "its write has not ended")
        let early = backlogs.take(for: alice, room: 2)
        #expect(early.isEmpty, "not durable yet: not for the lanes")
        backlogs.written([pending])
        let durable = backlogs.take(for: alice, room: 2)
        #expect(durable.map(\.position) == [1])
        backlogs.leftTheLanes(alice)
        let ended = backlogs.endIfDone(alice)
        #expect(ended)
    }

    @Test func pastTheWindowDeliveriesAreReadBackInOrder() throws {
        var backlogs = UserBacklogs(memoryAllowance: 4, windowSize: 3)
        backlogs.acquired([])
        _ = queue(7, of: alice, into: &backlogs)
        let window = backlogs.take(for: alice, room: 10)
        #expect(window.map(\.position) == [1, 2, 3], "the window only")
        let needed = backlogs.readNeeded(for: alice)
        let read = try #require(needed)
        #expect(read.after == 3 && !read.inDoubt)
        let second = backlogs.readNeeded(for: alice)
        #expect(second == nil, "one read at a time")
        // A delivery queued while the read is under way is dropped too: the read order decides.
        _ = queue(1, of: alice, into: &backlogs, from: 8)
        let readBack = (Int64(4)...6).map { position -> Delivery in
            let delivery = delivery(alice, position: position)
            delivery.backlogPlace = BacklogPlace(orderKey: UserBacklogs.text(alice), seq: position)
            return delivery
        }
        backlogs.read(for: alice, readBack, upTo: 6)
        let readBackFirst = backlogs.take(for: alice, room: 10)
        #expect(readBackFirst.map(\.position) == [4, 5, 6])
        let next = backlogs.readNeeded(for: alice)
        let again = try #require(next)
        #expect(again.after == 6)
        backlogs.read(for: alice, [delivery(alice, position: 7), delivery(alice, position: 8)], upTo: 8)
        let readBackLast = backlogs.take(for: alice, room: 10)
        #expect(readBackLast.map(\.position) == [7, 8])
        backlogs.leftTheLanes(alice)
        let ended = backlogs.endIfDone(alice)
        #expect(ended)
    }

    @Test func theMemoryBudgetHoldsForAllUsersAndAReadAlwaysFindsRoom() throws {
        let carol = OrderingKey(userId: "carol", platform: .ios)
        var backlogs = UserBacklogs(memoryAllowance: 4, windowSize: 3, memoryBudget: 4)
        backlogs.acquired([])
        _ = queue(3, of: alice, into: &backlogs)
        let bobs = queue(3, of: bob, into: &backlogs)
        #expect(backlogs.inMemory == 4, "alice's window, and one of bob's: the budget")
        #expect(backlogs.take(for: bob, room: 1).map(\.position) == [1])
        _ = queue(1, of: carol, into: &backlogs)
        #expect(backlogs.inMemory == 4)
        // The budget is full (alice's provider may be down: her window does not drain), and bob
        // still gets his next delivery, one at a time.
        let needed = backlogs.readNeeded(for: bob)
        let read = try #require(needed)
        #expect(read.after == bobs[0].backlogPlace?.seq && read.limit == 1)
        backlogs.read(for: bob, [delivery(bob, position: 2)], upTo: bobs[1].backlogPlace?.seq)
        #expect(backlogs.take(for: bob, room: 1).map(\.position) == [2])
        #expect(backlogs.inMemory == 4)
    }

    /// Reads go to the database by the hundred at once (a takeover): what the reads under way
    /// may bring counts against the budget from their start, so together they stay within it.
    @Test func readsUnderWayShareTheMemoryBudget() throws {
        var backlogs = UserBacklogs(memoryAllowance: 4, windowSize: 4, memoryBudget: 10)
        let carol = OrderingKey(userId: "carol", platform: .ios)
        backlogs.acquired([(user: alice, lastSeq: 10), (user: bob, lastSeq: 20), (user: carol, lastSeq: 30)])
        let reads = [alice, bob, carol].compactMap { backlogs.readNeeded(for: $0) }
        #expect(reads.map(\.limit) == [4, 4, 2])
        backlogs.read(for: alice, [], upTo: nil)
        let dave = OrderingKey(userId: "dave", platform: .ios)
        backlogs.acquired([(user: dave, lastSeq: 40)])
        let daves = backlogs.readNeeded(for: dave)
        #expect(daves?.limit == 4, "a new holder starts with nothing reserved")
        backlogs.readFailed(for: dave)
        let again = backlogs.readNeeded(for: dave)
        #expect(again?.limit == 4, "a failed read gives its share back")
    }

    @Test func readsBeyondTheirConcurrencyWaitTheirTurn() throws {
        var backlogs = UserBacklogs(memoryAllowance: 4, windowSize: 1)
        backlogs.acquired([])
        let users = (0...UserBacklogs.readConcurrency).map { OrderingKey(userId: "u\($0)", platform: .android) }
        var firstPlaces: [Int64] = []
        for user in users {
            firstPlaces += queue(2, of: user, into: &backlogs).prefix(1).compactMap { $0.backlogPlace?.seq }
            #expect(backlogs.take(for: user, room: 1).count == 1)
        }
        let reads = users.compactMap { backlogs.readNeeded(for: $0) }
        #expect(reads.map(\.user) == Array(users.dropLast()))
        #expect(backlogs.usersWaitingForRead().isEmpty, "no read is free")
        backlogs.read(for: users[0], [delivery(users[0], position: 2)], upTo: firstPlaces[0] + 1)
        #expect(backlogs.usersWaitingForRead() == [users.last!])
        let last = backlogs.readNeeded(for: users.last!)
        #expect(last?.after == firstPlaces.last)
    }

    /// A sent delivery's row goes only when its record is durable, after its user's backlog may
    /// have ended: the user's next backlog must not take that place again (the bench once lost
    /// 15 deliveries and sent 15 twice so).
    @Test func aBacklogThatBeginsAgainNeverTakesAPlaceTwice() {
        var backlogs = UserBacklogs(memoryAllowance: 1, windowSize: 8)
        backlogs.acquired([(user: bob, lastSeq: 7)])
        let first = queue(2, of: alice, into: &backlogs)
        #expect(first.compactMap { $0.backlogPlace?.seq } == [8, 9], "after every place taken")
        _ = backlogs.take(for: alice, room: 2)
        backlogs.leftTheLanes(alice)
        let ended = backlogs.endIfDone(alice)
        #expect(ended)
        let again = queue(1, of: alice, into: &backlogs, from: 3)
        #expect(again.compactMap { $0.backlogPlace?.seq } == [10])
        backlogs.forget()
        backlogs.acquired([])
        #expect(queue(1, of: alice, into: &backlogs, from: 4).compactMap { $0.backlogPlace?.seq } == [11], "never back")
    }

    @Test func aNewHolderReadsWhatIsQueuedWithTheFirstInDoubt() throws {
        var backlogs = UserBacklogs(memoryAllowance: 4, windowSize: 8)
        backlogs.acquired([(user: alice, lastSeq: 12)])
        #expect(backlogs.takes(alice, waiting: 0))
        let place = backlogs.place(for: alice)
        #expect(place.seq == 13, "after what is queued")
        let first = backlogs.readNeeded(for: alice)
        let read = try #require(first)
        #expect(read.after == 0 && read.inDoubt)
        backlogs.read(for: alice, [], upTo: nil)
        let after = backlogs.readNeeded(for: alice)
        #expect(after == nil)
    }

    @Test func aForgottenBacklogIsGone() {
        var backlogs = UserBacklogs(memoryAllowance: 1, windowSize: 8)
        backlogs.acquired([])
        _ = queue(3, of: alice, into: &backlogs)
        let forgotten = backlogs.forget()
        #expect(forgotten.count == 3)
        #expect(!backlogs.holdsAny && !backlogs.has(alice))
        #expect(!backlogs.takes(alice, waiting: 100))
        #expect(!backlogs.holdsBack(alice))
    }

    @Test func aSuspendedBacklogHoldsItsUsersBackAndResumesAsItWas() {
        var backlogs = UserBacklogs(memoryAllowance: 1, windowSize: 8)
        backlogs.acquired([])
        _ = queue(3, of: alice, into: &backlogs)
        backlogs.suspend()
        #expect(backlogs.holdsBack(alice), "alice's queued ones go first: her new one waits")
        #expect(!backlogs.holdsBack(bob))
        #expect(!backlogs.takes(bob, waiting: 100), "nothing is queued without the lock")
        backlogs.resume()
        #expect(!backlogs.holdsBack(alice))
        #expect(backlogs.take(for: alice, room: 1).map(\.position) == [1], "the window kept")
        // Taken back after another holder: what was known is read anew.
        backlogs.suspend()
        backlogs.acquired([(user: bob, lastSeq: 4)])
        #expect(!backlogs.has(alice) && backlogs.has(bob))
        #expect(backlogs.inMemory == 0)
    }

    /// With partitions, each partition's users are a scope of their own: held, left and
    /// forgotten with the partition, the others' untouched.
    @Test func aPartitionsBacklogIsHeldAndLeftOnItsOwn() throws {
        var backlogs = UserBacklogs(memoryAllowance: 1, windowSize: 8, partitions: 4)
        let users = (0..<40).map { OrderingKey(userId: "user-\($0)", platform: .ios) }
        let mine = try #require(users.first { backlogs.scope(of: $0) == 1 })
        let other = try #require(users.first { backlogs.scope(of: $0) == 2 })
        backlogs.acquired([(user: mine, lastSeq: 5)], scope: 1)
        #expect(backlogs.takes(mine, waiting: 1) && !backlogs.takes(other, waiting: 100), "only the held partition's users queue here")
        backlogs.acquired([], scope: 2)
        let queued = queue(3, of: other, into: &backlogs)
        #expect(queued.compactMap { $0.backlogPlace?.seq } == [6, 7, 8], "after every place read in any scope")
        #expect(backlogs.take(for: other, room: 1).map(\.position) == [1])

        // Partition 2 is handed over: queued still (its messages settle), nothing more sent.
        backlogs.leave(scope: 2)
        #expect(backlogs.queues(other) && !backlogs.holds(other))
        #expect(backlogs.take(for: other, room: 1).isEmpty)
        let stillThere = !backlogs.hasLeft(scope: 2), notLeaving = backlogs.hasLeft(scope: 1)
        #expect(stillThere, "its first delivery is still in the lanes")
        #expect(notLeaving, "not being left")
        backlogs.recordQueued(for: other)
        backlogs.leftTheLanes(other)
        let waitsForTheRecord = !backlogs.hasLeft(scope: 2)
        #expect(waitsForTheRecord, "answered, but its row goes only with its durable record")
        backlogs.recordDone(for: other)
        let left = backlogs.hasLeft(scope: 2)
        #expect(left)
        let dropped = backlogs.forget(scope: 2)
        #expect(dropped.map(\.position) == [2, 3])
        #expect(backlogs.holding(other) == nil && !backlogs.has(other))
        #expect(backlogs.holds(mine) && backlogs.has(mine), "partition 1 untouched")
        #expect(backlogs.inMemory == 0)
    }

    /// A delivery handed to the lanes is still this worker's when its scope is forgotten (a
    /// handover cut short, a lock taken by another): leaving the scope waits for it, the scope
    /// taken back reads on after its place, and the user's backlog ends only once it is answered.
    @Test func aDeliveryInTheLanesOutlivesItsForgottenScope() {
        var backlogs = UserBacklogs(memoryAllowance: 1, windowSize: 8)
        backlogs.acquired([])
        _ = queue(2, of: alice, into: &backlogs)
        #expect(backlogs.take(for: alice, room: 1).map(\.position) == [1])
        _ = backlogs.forget()
        backlogs.leave(scope: 0)
        let waits = !backlogs.hasLeft(scope: 0)
        #expect(waits, "not held, but its delivery is in the lanes here")

        backlogs.acquired([(user: alice, lastSeq: 2)])
        let read = backlogs.readNeeded(for: alice)
        #expect(read?.after == 1, "its row is still there: read on after it")
        backlogs.read(for: alice, [], upTo: nil)
        let open = !backlogs.endIfDone(alice)
        #expect(open, "nothing left to read, but its delivery is still in the lanes")
        backlogs.leave(scope: 0)
        let stillWaits = !backlogs.hasLeft(scope: 0)
        #expect(stillWaits)
        backlogs.leftTheLanes(alice)
        let left = backlogs.hasLeft(scope: 0), ended = backlogs.endIfDone(alice)
        #expect(left && ended)
    }

    @Test func orderKeysParseBackWhateverTheUserId() {
        for user in [OrderingKey(userId: "a:b/c", platform: .android), OrderingKey(userId: "", platform: .ios), alice] {
            #expect(UserBacklogs.user(UserBacklogs.text(user)) == user)
        }
        #expect(UserBacklogs.user("nonsense") == nil)
    }
}
