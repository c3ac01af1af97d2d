import Synchronization
import Testing

@testable import HeraldWorker

/// The worker's stop (``StopSignal``), in process: phases, handlers, and sleeps that wake at once.
@Suite("Stop signal")
struct StopSignalTests {
    @Test func theStopGoesForwardOnlyAndRunsEachHandlerOnce() {
        let stop = StopSignal()
        let runs = Counter()
        _ = stop.onStop { runs.add() }
        let removed = stop.onStop { runs.add() }
        stop.remove(removed)
        #expect(stop.phase == .running)
        stop.abort()
        #expect(stop.isStopping && stop.isAborted)
        stop.stop()
        #expect(stop.phase == .aborted, "never back")
        #expect(runs.value == 1)
        _ = stop.onStop { runs.add() }
        #expect(runs.value == 2, "registered after the stop: run at once")
    }

    @Test func aSleepWakesWhenItsPhaseComesNotBefore() async {
        let stop = StopSignal()
        #expect(await stop.sleep(for: .milliseconds(10)), "the whole duration")

        let start = ContinuousClock.now
        async let untilAborted = stop.sleep(for: .seconds(30), until: .aborted)
        async let untilStopping = stop.sleep(for: .seconds(30))
        try? await Task.sleep(for: .milliseconds(50))
        stop.stop()
        #expect(await untilStopping == false)
        try? await Task.sleep(for: .milliseconds(50))
        stop.abort()
        #expect(await untilAborted == false)
        #expect(ContinuousClock.now - start < .seconds(10), "woken, not timed out")
        #expect(await stop.sleep(for: .seconds(30)) == false, "already stopping: at once")
    }

    @Test func cancellingTheSleeperWakesIt() async {
        let stop = StopSignal()
        let task = Task { await stop.sleep(for: .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(20))
        task.cancel()
        #expect(await task.value == false)
    }

    private final class Counter: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }
}
