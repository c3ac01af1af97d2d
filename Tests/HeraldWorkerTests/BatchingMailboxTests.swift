import Testing

@testable import HeraldWorker

/// The one batching mailbox the engine and the intake use (``BatchingMailbox``), in process.
@Suite("Batching mailbox")
struct BatchingMailboxTests {
    @Test func aTakeGetsEverythingPostedSinceTheLastOneInOrder() async {
        let mailbox = BatchingMailbox<Int>()
        mailbox.post(1)
        mailbox.post(contentsOf: [2, 3])
        #expect(await mailbox.take() == [1, 2, 3])
        mailbox.post(contentsOf: [4, 5, 6])
        #expect(await mailbox.take(max: 2) == [4, 5], "at most max, the rest stays")
        #expect(await mailbox.take(max: 2) == [6])
    }

    @Test func aWaitingTakeWakesForAPostFromAnotherTask() async {
        let mailbox = BatchingMailbox<Int>()
        async let taken = mailbox.take()
        try? await Task.sleep(for: .milliseconds(20))
        Task.detached { mailbox.post(7) }
        #expect(await taken == [7])
    }

    @Test func aNormalEndStillHandsOutWhatIsBufferedAnErrorDropsIt() async {
        let normal = BatchingMailbox<Int>()
        normal.post(1)
        normal.end(error: nil)
        #expect(await normal.take() == [1])
        #expect(await normal.take() == nil)
        #expect(normal.endError == nil)

        let failed = BatchingMailbox<Int>()
        failed.post(1)
        failed.end(error: Failure())
        #expect(await failed.take() == nil, "the broker requeues it: never started here")
        failed.close()
        #expect(failed.endError is Failure, "closing keeps why it ended")
    }

    @Test func closingOrCancellingEndsAWaitingTake() async {
        let closed = BatchingMailbox<Int>()
        async let none = closed.take()
        try? await Task.sleep(for: .milliseconds(20))
        closed.close()
        #expect(await none == nil)
        closed.post(1)
        #expect(await closed.take() == nil, "nothing more is taken once closed")

        let cancelled = BatchingMailbox<Int>()
        let task = Task { await cancelled.take() }
        try? await Task.sleep(for: .milliseconds(20))
        task.cancel()
        #expect(await task.value == nil)
    }

    private struct Failure: Error {}
}
