import Synchronization
import Testing

@testable import HeraldWorker

/// Waiting for shared state without polling (``ChangeSignal``), in process.
@Suite("Change signal")
struct ChangeSignalTests {
    @Test func aWaitEndsWhenTheStateItWaitsForIsSignalled() async {
        let signal = ChangeSignal(), stop = StopSignal()
        let count = Atomic<Int>(3)
        let start = ContinuousClock.now
        async let result = signal.wait(for: { count.load(ordering: .sequentiallyConsistent) == 0 }, until: start + .seconds(30), stop: stop)
        for _ in 0..<3 {
            try? await Task.sleep(for: .milliseconds(20))
            count.subtract(1, ordering: .sequentiallyConsistent)
            signal.changed()
        }
        #expect(await result == .satisfied)
        #expect(ContinuousClock.now - start < .seconds(10), "woken by the change, not by the deadline")
    }

    @Test func aWaitEndsAtItsDeadlineOrWhenTheStopComes() async {
        let signal = ChangeSignal(), stop = StopSignal()
        let start = ContinuousClock.now
        #expect(await signal.wait(for: { false }, until: start + .milliseconds(100), stop: stop) == .timedOut)
        #expect(ContinuousClock.now - start >= .milliseconds(100))

        async let stopped = signal.wait(for: { false }, until: .now + .seconds(30), stop: stop)
        async let untilAborted = signal.wait(for: { false }, until: .now + .seconds(30), stop: stop, phase: .aborted)
        try? await Task.sleep(for: .milliseconds(50))
        stop.stop()
        #expect(await stopped == .stopped)
        stop.abort()
        #expect(await untilAborted == .stopped)
        #expect(await signal.wait(for: { true }, until: .now, stop: stop) == .satisfied, "a condition that holds wins")
    }
}
