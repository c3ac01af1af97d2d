import HeraldCore
import HeraldStore
import Testing

@testable import HeraldWorker

/// The engine's rules, turn by turn, in process: no broker, no database, no provider
/// (``EngineCore``, driven by ``EngineHarness``).
@Suite("Engine core")
struct EngineCoreTests {
    private typealias H = EngineHarness

    // MARK: Order and lanes

    @Test func aUsersDeliveriesGoOutOneAtATimeInOrderAndEachIsRecorded() {
        var h = H()
        let alice = (1...3).map { H.delivery("alice", $0) }
        h.turn([.fanOut(alice)])
        #expect(h.last.sends.map(\.position) == [1], "the next one waits until the first is answered")
        h.answer([alice[0]], .sent)
        #expect(h.last.sends.map(\.position) == [2])
        #expect(h.last.recordWrites.flatMap(\.rows).map(\.state) == [.sent])
        h.answer([alice[1]], .sent)
        h.answer([alice[2]], .sent)
        h.recordsDurable()
        #expect(h.sent.map(\.position) == [1, 2, 3])
        #expect(alice.allSatisfy { h.rows(of: $0).map(\.state) == [.sent] })
        #expect(h.last.pushes.isEmpty)
    }

    @Test func theLanesBoundWhatIsInFlightAndAFreedLaneServesTheNextUser() {
        var h = H(H.settings(lanes: 2))
        let first = ["alice", "bob", "carol"].map { H.delivery($0, 1) }
        h.turn([.fanOut(first)])
        #expect(h.last.sends.map(\.recipient.addressedUserId) == ["alice", "bob"])
        #expect(h.core.running == 2)
        h.answer([first[1]], .sent)
        #expect(h.last.sends.map(\.recipient.addressedUserId) == ["carol"])
    }

    @Test func aDeliveryNoMessageWaitsForIsNotSentAndItsUserGoesOn() {
        var h = H()
        let orphan = H.delivery("alice", 1), next = H.delivery("alice", 2)
        h.orphans.insert(orphan)
        h.turn([.fanOut([orphan, next])])
        #expect(h.last.sends.map(\.position) == [2], "its message was requeued with a lost connection")
        #expect(h.dropped.map(\.position) == [1])
    }

    // MARK: Retries

    @Test func aRetriedDeliveryLetsOthersUseItsLaneAndKeepsItsUsersOrder() {
        var h = H(H.settings(lanes: 1))
        let a1 = H.delivery("alice", 1), a2 = H.delivery("alice", 2), b1 = H.delivery("bob", 1)
        h.turn([.fanOut([a1, a2, b1])])
        #expect(h.last.sends.map(\.position) == [1])
        h.answer([a1], .retryAfter(nil, reason: "429", providerFault: false))
        #expect(h.last.sends.map(\.recipient.addressedUserId) == ["bob"], "alice's lane serves bob while she waits")
        #expect(h.rows(of: a1).map(\.state) == [.pending], "the attempt and position survive a restart")
        #expect(h.last.wakeAt == h.clock + .seconds(1))
        h.answer([b1], .sent)
        #expect(h.last.sends.isEmpty, "alice's second push waits behind her first")
        h.advance(by: .seconds(1))
        h.turn()
        #expect(h.last.sends.map(\.position) == [1])
        #expect(a1.attempts == 2)
        h.answer([a1], .sent)
        #expect(h.last.sends.map(\.position) == [2])
        h.recordsDurable()
        #expect(h.rows(of: a1).map(\.state) == [.pending, .sent])
        #expect(h.rows(of: a1).last?.completesPendingRow == true)
    }

    @Test func aDeliveryOutOfAttemptsFailsAndItsUserGoesOn() {
        var h = H(H.settings(policy: RetryPolicy(initialDelay: .seconds(1), jitter: 0, maxAttempts: 1)))
        let a1 = H.delivery("alice", 1), a2 = H.delivery("alice", 2)
        h.turn([.fanOut([a1, a2])])
        h.answer([a1], .retryAfter(nil, reason: "429", providerFault: false))
        #expect(h.rows(of: a1).map(\.state) == [.failed])
        #expect(h.last.sends.map(\.position) == [2])
    }

    @Test func aDeadTokenIsNotSentToAgain() {
        var h = H()
        let a1 = H.delivery("alice", 1), a2 = H.delivery("alice", 2)
        h.turn([.fanOut([a1])])
        h.answer([a1], .tokenDead(reason: "Unregistered"))
        h.turn([.fanOut([a2])])
        #expect(h.sent.map(\.position) == [1])
        #expect(h.rows(of: a2).map(\.state) == [.tokenDead])
    }

    // MARK: Records

    @Test func fewRecordsLingerForMoreButNotPastTheirTime() {
        var h = H(H.settings(recordLinger: .milliseconds(5)))
        let a1 = H.delivery("alice", 1)
        h.turn([.fanOut([a1])])
        h.answer([a1], .sent)
        #expect(h.last.recordWrites.isEmpty)
        #expect(h.last.wakeAt == h.clock + .milliseconds(5))
        h.advance(by: .milliseconds(5))
        h.turn()
        #expect(h.last.recordWrites.flatMap(\.rows).map(\.state) == [.sent])
        #expect(h.core.running == 1, "until the row is durable")
        h.recordsDurable()
        #expect(h.core.isIdle)
    }

    // MARK: The backlog

    @Test func aBusyUsersLaterDeliveriesAreParkedInTheBacklogAndComeBackInOrder() {
        var h = H(H.settings(backlogAfter: 2))
        h.turn([.backlogAcquired(0, [])])
        let alice = (1...5).map { H.delivery("alice", $0) }
        h.turn([.fanOut(alice)])
        #expect(h.last.sends.map(\.position) == [1])
        #expect(h.last.backlogWrite.map(\.position) == [2, 3, 4, 5], "what waited in memory is queued first, in order")
        #expect(h.last.backlogWrite.compactMap(\.backlogPlace?.seq) == [1, 2, 3, 4])
        #expect(h.finished.isEmpty, "not settled before the rows are durable")

        h.turn([.backlogWritten(Array(alice[1...]), true)])
        #expect(h.finished.map(\.position) == [2, 3, 4, 5], "their messages are acknowledged: the prefetch window is free")

        let bob = H.delivery("bob", 1)
        h.turn([.fanOut([bob])])
        #expect(h.last.sends.map(\.recipient.addressedUserId) == ["bob"], "other users are not held by alice's burst")

        for delivery in alice {
            h.answer([delivery], .sent)
            h.recordsDurable()
        }
        #expect(h.sent.filter { $0.recipient.addressedUserId == "alice" }.map(\.position) == [1, 2, 3, 4, 5])
        #expect(alice[1...].allSatisfy { h.rows(of: $0).first?.backlogPlace != nil }, "their records remove their backlog rows")
    }

    @Test func aTakenOverBacklogIsReadAskedAboutAndSentBeforeTheUsersNewDeliveries() {
        var h = H()
        let alice = OrderingKey(userId: "alice", platform: .ios)
        h.turn([.backlogAcquired(0, [(alice, Int64(3))])])
        let read = h.last.backlogReads.first?.first
        #expect(read?.user == alice)
        #expect(read?.after == 0)
        #expect(read?.inDoubt == true, "the previous holder may have sent the first one just before it went")

        let newer = H.delivery("alice", 4)
        h.turn([.fanOut([newer])])
        #expect(h.last.sends.isEmpty)
        #expect(h.last.backlogWrite.map(\.position) == [4], "behind the queued ones")

        let queued = (1...3).map { H.queued("alice", Int64($0), inDoubt: $0 == 1) }
        h.turn([.backlogRead(alice, queued, upTo: 3), .backlogWritten([newer], true)])
        #expect(h.last.reconcile.map(\.position) == [1], "in doubt: looked up, not sent")
        #expect(h.last.sends.isEmpty)
        h.turn([.reconciled(queued[0], .delivered)])
        #expect(h.rows(of: queued[0]).map(\.state) == [.sent], "it went out before the takeover: recorded, not sent again")
        #expect(h.last.sends.map(\.position) == [2])
        h.answer([queued[1]], .sent)
        h.answer([queued[2]], .sent)
        #expect(h.sent.map(\.position) == [2, 3, 4])
    }

    private static let alice = OrderingKey(userId: "alice", platform: .ios)

    /// A worker with 4 partitions that took alice's partition and sent her first queued delivery.
    private static func partitionSendingAlicesFirstQueued() -> (H, scope: Int, first: Delivery) {
        var h = H(H.settings(partitions: 4))
        let scope = UserBacklogs.scope(of: alice, partitions: 4)
        h.turn([.backlogAcquired(scope, [(alice, Int64(1))])])
        let first = H.queued("alice", 1)
        h.turn([.backlogRead(alice, [first], upTo: 1)])
        #expect(h.last.sends.map(\.position) == [1])
        return (h, scope, first)
    }

    @Test func aHandedOverPartitionDropsItsWaitingBacklogAndReportsWhenItHasLeft() {
        var (h, scope, queued) = Self.partitionSendingAlicesFirstQueued()
        h.answer([queued], .retryAfter(nil, reason: "429", providerFault: false))
        #expect(h.rows(of: queued).isEmpty, "a queued delivery's row stays queued: its backlog row resumes it")
        h.turn([.backlogLeaving(scope)])
        #expect(h.last.leftScopes == [scope], "nothing of the partition is in the lanes here any more")
        h.advance(by: .seconds(2))
        h.turn()
        #expect(h.sent.count == 1, "the next owner sends it from its row")
    }

    @Test func aPartitionTakenBackWithADeliveryInFlightReadsOnAfterItAndSendsItOnce() {
        let alice = Self.alice
        var (h, scope, first) = Self.partitionSendingAlicesFirstQueued()

        // The handover gave up waiting, another worker held the partition, and it came back
        // while the first delivery was still in flight: its row is still in the table.
        h.turn([.backlogLeaving(scope)])
        #expect(h.last.leftScopes.isEmpty, "a delivery of the partition is in the lanes")
        h.turn([.backlogGone(scope), .backlogAcquired(scope, [(alice, Int64(2))])])
        let read = h.last.backlogReads.first?.first
        #expect(read?.after == 1, "read on after the delivery in flight, not it again")

        let second = H.queued("alice", 2)
        h.turn([.backlogRead(alice, [second], upTo: 2)])
        #expect(h.last.sends.isEmpty, "behind its user's delivery in flight")
        h.answer([first], .sent)
        h.recordsDurable()
        #expect(h.sent.map(\.position) == [1, 2], "each once, in order")
    }

    @Test func aDeliveryAnsweredAfterItsPartitionWentIsNoLongerWaitedFor() {
        let alice = Self.alice
        var (h, scope, first) = Self.partitionSendingAlicesFirstQueued()
        h.turn([.backlogGone(scope)])
        h.answer([first], .sent)
        h.recordsDurable()
        #expect(h.rows(of: first).map(\.state) == [.sent], "answered while its partition was another worker's")

        h.turn([.backlogLeaving(scope)])
        #expect(h.last.leftScopes == [scope], "nothing of the partition is in the lanes any more")
        h.turn([.backlogAcquired(scope, [(alice, Int64(2))])])
        #expect(h.last.backlogReads.first?.first?.after == 0, "nothing in flight to read on after")
    }

    // MARK: Provider outages

    private static let breaker = CircuitBreaker.Policy(
        minimumFailures: 2, failureRatio: 0.5, window: .seconds(10), initialOpen: .seconds(5), maximumOpen: .seconds(60), slowAnswer: nil)
    private static let outage = DeliveryOutcome.retryAfter(nil, reason: "503", providerFault: true)

    @Test func anOpenBreakerDefersItsProvidersDeliveriesAndAProbeClosesIt() {
        var h = H(H.settings(breaker: Self.breaker))
        let phones = (1...2).map { H.delivery("user\($0)", 1) }
        let android = H.delivery("user1", 1, platform: .android)
        h.turn([.fanOut(phones + [android])])
        #expect(h.last.sends.count == 3)
        h.answer(phones, Self.outage)
        h.answer([android], .sent)
        #expect(Set(h.deferred.map(\.recipient.addressedUserId)) == ["user1", "user2"])
        #expect(phones.allSatisfy { h.rows(of: $0).map(\.state) == [.deferred] }, "their messages go to the wait queue")

        let later = H.delivery("user3", 1), laterAndroid = H.delivery("user3", 1, platform: .android)
        h.turn([.fanOut([later, laterAndroid])])
        #expect(h.last.sends.map(\.recipient.subscription.platform) == [.android], "the other provider is not held")
        #expect(h.deferred.contains { $0 === later })

        h.advance(by: .seconds(5))
        let probe = H.delivery("user4", 1), held = H.delivery("user5", 1)
        h.turn([.fanOut([probe, held])])
        #expect(h.last.sends.map(\.recipient.addressedUserId) == ["user4"], "half-open: one probe, the rest held")
        #expect(probe.isProbe)
        h.answer([probe], .sent)
        #expect(h.last.sends.map(\.recipient.addressedUserId) == ["user5"], "closed: the held ones go")
    }

    @Test func withTheBacklogAnOutageParksDeliveriesInOrderAndTheyDrainAfterTheProbe() {
        var h = H(H.settings(breaker: Self.breaker))
        h.turn([.backlogAcquired(0, [])])
        let first = (1...2).map { H.delivery("user\($0)", 1) }
        h.turn([.fanOut(first)])
        let behind = H.delivery("user1", 2)
        h.turn([.fanOut([behind])])
        h.answer(first, Self.outage)
        let written = h.last.backlogWrite
        #expect(written.map(\.recipient.addressedUserId) == ["user1", "user1", "user2"])
        #expect(written.map(\.position) == [1, 2, 1], "the failed one first, its user's waiting one behind it")
        #expect(h.deferred.isEmpty, "no wait queue")
        h.turn([.backlogWritten(written, true)])
        #expect(h.last.sends.isEmpty, "the breaker is open")
        h.advance(by: .seconds(5))
        h.turn()
        #expect(h.last.sends.count == 1, "one probe")
        h.answer(h.last.sends, .sent)
        h.answer(h.last.sends, .sent)
        h.answer(h.last.sends, .sent)
        let user1 = h.sent.filter { $0.recipient.addressedUserId == "user1" }.map(\.position)
        #expect(user1 == [1, 1, 2], "sent, retried from the backlog after the outage, then the next one, in order")
        #expect(h.sent.filter { $0.recipient.addressedUserId == "user2" }.count == 2)
    }

    // MARK: In doubt

    @Test func anInDoubtDeliveryIsLookedUpBeforeItIsSentAgain() {
        var h = H()
        let again = H.delivery("alice", 1, inDoubt: true), recorded = H.delivery("bob", 1, inDoubt: true)
        h.turn([.fanOut([again, recorded])])
        #expect(h.last.sends.isEmpty)
        #expect(h.last.reconcile.count == 2)
        #expect(h.core.running == 2, "a stop waits for the lookups")
        h.turn([.reconciled(again, .send), .reconciled(recorded, .recorded(.sent))])
        #expect(h.last.sends.map(\.recipient.addressedUserId) == ["alice"], "nobody knew: sent again, with its collapse id")
        #expect(h.rows(of: recorded).isEmpty, "another copy recorded it: nothing to write")
        #expect(h.finished.contains { $0 === recorded })
    }

    // MARK: Stopping

    @Test func aStopDropsWhatWaitsAndStillRecordsWhatWasSent() {
        var h = H(H.settings(lanes: 1, recordLinger: .milliseconds(5)))
        let a1 = H.delivery("alice", 1), b1 = H.delivery("bob", 1), c1 = H.delivery("carol", 1)
        h.turn([.fanOut([a1, b1, c1])])
        h.answer([a1], .retryAfter(nil, reason: "429", providerFault: false))
        #expect(h.last.sends.map(\.recipient.addressedUserId) == ["bob"])
        h.turn(stopping: true)
        #expect(h.dropped.map(\.recipient.addressedUserId) == ["alice"], "parked for a retry: its message comes again")
        h.answer([b1], .sent, stopping: true)
        #expect(h.last.sends.isEmpty, "nothing more is sent")
        #expect(h.dropped.map(\.recipient.addressedUserId) == ["alice", "carol"], "waiting for the lane: dropped when it frees")
        #expect(h.last.recordWrites.flatMap(\.rows).map(\.state) == [.sent], "no lingering while stopping")
        #expect(h.rows(of: a1).map(\.state) == [.pending], "the parked one's attempt is kept")
        h.recordsDurable(stopping: true, finished: true)
        #expect(h.core.isIdle)
        h.advance(by: .seconds(2))
        h.turn(stopping: true)
        #expect(h.sent.count == 2, "no retry after the stop")
    }
}
