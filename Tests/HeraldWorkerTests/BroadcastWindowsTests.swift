import HeraldCore
import HeraldStore
import Testing

@testable import HeraldWorker

/// A broadcast's windows as its driver decides them (``BroadcastWindows``), in process.
@Suite("Broadcast windows")
struct BroadcastWindowsTests {
    private static func window(_ after: Int64, _ through: Int64, devices: Int = 2) -> BroadcastWindows.Open {
        let recipients = (0..<devices).map { index in
            Recipient(
                subscription: Subscription(deviceId: "d\(index)", token: "t", platform: .ios, userId: "u\(index)", culture: "ru-RU", deviceRef: Int64(index)),
                addressedUserId: "u\(index)")
        }
        return BroadcastWindows.Open(window: BroadcastWindow(after: after, through: through) { _ in }, recipients: recipients, rendered: [])
    }

    private static func broadcast(claimed: Int64 = 0) -> Broadcast {
        Broadcast(messageId: 1, key: MessageKey(text: "b"), body: [], contentType: nil, partition: nil, partitions: nil, claimed: claimed)
    }

    @Test func theCursorMovesOnlyPastTheOldestWindowsThatAreDone() {
        let start = ContinuousClock.now
        var progress = BroadcastWindows(Self.broadcast(), maxOpen: 2, now: start)
        let (first, second) = (Self.window(0, 10), Self.window(10, 20))
        progress.started(first, through: 10)
        progress.started(second, through: 20)
        #expect(!progress.wantsWindow, "two under way at most")
        let rerun = progress.settled(.init(window: second.window, deferredUntil: nil))
        #expect(rerun == nil)
        let early = progress.advance(now: start + .seconds(5))
        #expect(!early)
        #expect(progress.broadcast.cursor == 0, "the older window is not done: a resume must check it")
        _ = progress.settled(.init(window: first.window, deferredUntil: nil))
        let written = progress.advance(now: start + .seconds(5))
        #expect(written, "a second since the row was written")
        #expect(progress.broadcast.cursor == 20)
        #expect(progress.broadcast.selected == 4)
        #expect(progress.wantsWindow)
        progress.audienceEnded()
        #expect(progress.isDone)
    }

    @Test func theRowIsWrittenAtMostOnceASecondExceptAtTheEnd() {
        let start = ContinuousClock.now
        var progress = BroadcastWindows(Self.broadcast(), maxOpen: 4, now: start)
        let windows: [BroadcastWindows.Open] = (0..<3).map { index in Self.window(Int64(index) * 10, Int64(index + 1) * 10) }
        for window in windows { progress.started(window, through: window.window.through) }
        _ = progress.settled(.init(window: windows[0].window, deferredUntil: nil))
        let soon = progress.advance(now: start + .milliseconds(100))
        #expect(!soon, "moved, but written less than a second ago")
        #expect(progress.broadcast.cursor == 10)
        progress.audienceEnded()
        _ = progress.settled(.init(window: windows[1].window, deferredUntil: nil))
        _ = progress.settled(.init(window: windows[2].window, deferredUntil: nil))
        let end = progress.advance(now: start + .milliseconds(200))
        #expect(end, "the end is written at once")
        #expect(progress.isDone)
    }

    @Test func aWindowWithDeferredDeliveriesIsSentAgainWhenDueAndHoldsTheCursor() {
        let start = ContinuousClock.now
        var progress = BroadcastWindows(Self.broadcast(claimed: 30), maxOpen: 4, now: start)
        #expect(progress.isResumed(after: 10), "before the claimed mark: it may have been under way")
        #expect(!progress.needsClaim(through: 30))
        #expect(progress.needsClaim(through: 40))
        let window = Self.window(30, 40)
        progress.started(window, through: 40)
        let due = start + .seconds(5)
        let wake = progress.settled(.init(window: window.window, deferredUntil: due))
        #expect(wake == due, "the driver wakes then")
        #expect(progress.dueReruns(now: start + .seconds(1)).isEmpty)
        #expect(progress.dueReruns(now: due) == [0])
        let again = Self.window(30, 40)
        progress.restarted(again, at: 0)
        let held = progress.advance(now: due)
        #expect(!held, "not done: the cursor holds")
        _ = progress.settled(.init(window: again.window, deferredUntil: nil))
        let moved = progress.advance(now: due + .seconds(1))
        #expect(moved)
        #expect(progress.broadcast.cursor == 40)
    }
}
