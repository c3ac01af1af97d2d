import Foundation
import Synchronization

/// Appends recorded pushes to the record file from a thread of its own, in batches: the
/// servers' event loops only queue a push, and the writer encodes everything queued since its
/// last turn and writes it with one `write(2)`, then rests a few milliseconds so that the next
/// batch gathers. ``flush()`` waits until every push queued before it is in the file.
///
/// Thread rules: `Sendable`; the writer thread owns the file descriptor until ``stop()``
/// returns, and then it is closed.
final class RecordWriter: Sendable {
    private struct State {
        var queued: [RecordedPush] = []
        /// Pushes ever queued, and ever written (or given up on after a write error).
        var enqueued = 0
        var written = 0
        /// The writer sleeps on ``wakeup`` until someone signals it.
        var writerIdle = false
        var stopping = false
        var flushWaiters: [(target: Int, semaphore: DispatchSemaphore)] = []
    }

    /// How long the writer rests after a batch, so that the next one gathers.
    static let batchInterval: Duration = .milliseconds(5)

    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let descriptor: Int32

    /// Starts the writer thread; it owns `descriptor` from now on.
    init(descriptor: Int32) {
        self.descriptor = descriptor
        let thread = Thread { [self] in run() }
        thread.name = "herald.sandbox.recorder"
        thread.start()
    }

    func enqueue(_ push: RecordedPush) {
        let wake = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.queued.append(push)
            state.enqueued += 1
            return Self.takeIdle(&state)
        }
        if wake { wakeup.signal() }
    }

    /// Returns once every push queued so far has been written.
    func flush() {
        let semaphore = DispatchSemaphore(value: 0)
        let (done, wake) = state.withLock { state -> (Bool, Bool) in
            if state.written >= state.enqueued || state.stopping { return (true, false) }
            state.flushWaiters.append((state.enqueued, semaphore))
            return (false, Self.takeIdle(&state))
        }
        if wake { wakeup.signal() }
        if !done { semaphore.wait() }
    }

    /// Writes what is queued, stops the thread and closes the file. Idempotent.
    func stop() {
        let first = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.stopping = true
            state.writerIdle = false
            return true
        }
        guard first else { return }
        wakeup.signal()
        stopped.wait()
        close(descriptor)
    }

    private static func takeIdle(_ state: inout State) -> Bool {
        guard state.writerIdle else { return false }
        state.writerIdle = false
        return true
    }

    private func run() {
        var buffer: [UInt8] = []
        while true {
            let turn = state.withLock { state -> (batch: [RecordedPush], target: Int, stopping: Bool)? in
                if state.queued.isEmpty && !state.stopping {
                    state.writerIdle = true
                    return nil
                }
                defer { state.queued.removeAll(keepingCapacity: true) }
                return (state.queued, state.enqueued, state.stopping)
            }
            guard let turn else {
                wakeup.wait()
                continue
            }
            buffer.removeAll(keepingCapacity: true)
            for push in turn.batch { push.appendJSONLine(to: &buffer) }
            writeAll(buffer)
            let waiting = state.withLock { state -> Bool in
                state.written = turn.target
                let (done, left) = (state.flushWaiters.filter { $0.target <= turn.target }, state.flushWaiters.filter { $0.target > turn.target })
                state.flushWaiters = left
                for waiter in done { waiter.semaphore.signal() }
                return !left.isEmpty
            }
            if turn.stopping {
                // Whatever was queued before stop() is written; later pushes stay in memory only.
                state.withLock { state in
                    for waiter in state.flushWaiters { waiter.semaphore.signal() }
                    state.flushWaiters = []
                }
                stopped.signal()
                return
            }
            if !waiting { Thread.sleep(forTimeInterval: Self.batchInterval.seconds) }
        }
    }

    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += n
            }
        }
    }
}

extension Duration {
    /// The duration in seconds, for APIs that take a `TimeInterval`.
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
