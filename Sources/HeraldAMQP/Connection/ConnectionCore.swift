import Logging
import Synchronization

/// The state shared between the public handles (called from any task) and the connection thread:
/// the locked command queue, the connection's phase, and the waiters for its end.
///
/// Thread rules: every field is behind `state`'s mutex; the lock is held only to move values in and
/// out, never across a librabbitmq call or a continuation resume.
final class ConnectionCore: Sendable {
    enum Phase {
        /// The thread is connecting; no command is accepted yet.
        case starting
        case open
        /// `close()` was called: new commands are refused, queued ones still run.
        case closing
        /// The thread has ended; `nil` after a graceful close, the error after a failure.
        case closed(AMQPError?)
    }

    private struct State {
        var phase: Phase = .starting
        var commands: [ConnectionCommand] = []
        var wakePending = false
        var endWaiters: [CheckedContinuation<AMQPError?, Never>] = []
        var nextConsumerID: UInt64 = 1
    }

    private let state = Mutex(State())
    let wake: WakeSignal
    let configuration: AMQPConfiguration
    let logger: Logger

    init(configuration: AMQPConfiguration, logger: Logger) throws(AMQPError) {
        self.configuration = configuration
        self.logger = logger
        wake = try WakeSignal()
    }

    // MARK: Any task

    /// Queues a command for the thread and wakes it.
    /// - Throws: ``AMQPError/Code/connectionClosed`` while closing or after `close()`, or the error
    ///   that ended the connection.
    func submit(_ command: ConnectionCommand) throws(AMQPError) {
        let needsWake = try state.withLock { state throws(AMQPError) -> Bool in
            guard case .open = state.phase else { throw Self.refusal(for: state.phase) }
            state.commands.append(command)
            if state.wakePending { return false }
            state.wakePending = true
            return true
        }
        if needsWake { wake.signal() }
    }

    /// A fresh consumer identifier (unique for the connection's life).
    func makeConsumerID() -> UInt64 {
        state.withLock { state in
            defer { state.nextConsumerID += 1 }
            return state.nextConsumerID
        }
    }

    var isOpen: Bool {
        state.withLock { state in
            if case .open = state.phase { return true }
            return false
        }
    }

    /// Asks the thread to close gracefully (idempotent); returns at once.
    func requestClose() {
        let needsWake = state.withLock { state -> Bool in
            guard case .open = state.phase else { return false }
            state.phase = .closing
            state.commands.append(.close)
            state.wakePending = true
            return true
        }
        if needsWake { wake.signal() }
    }

    /// Suspends until the thread has ended; returns the error that ended it (`nil` after `close()`).
    func waitUntilEnded() async -> AMQPError? {
        await withCheckedContinuation { (continuation: CheckedContinuation<AMQPError?, Never>) in
            let ended: AMQPError?? = state.withLock { state in
                if case .closed(let error) = state.phase { return .some(error) }
                state.endWaiters.append(continuation)
                return .none
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    // MARK: Connection thread

    func markOpen() {
        state.withLock { $0.phase = .open }
    }

    /// Takes every queued command (oldest first). The wake pipe is emptied where the thread polls
    /// it: a byte written after this call only makes the next `poll` return at once.
    func takeCommands() -> [ConnectionCommand] {
        state.withLock { state in
            state.wakePending = false
            guard !state.commands.isEmpty else { return [] }
            let commands = state.commands
            state.commands.removeAll(keepingCapacity: true)
            return commands
        }
    }

    /// Records the end of the connection, fails commands that arrived too late, and resumes the
    /// waiters. Called once by the thread as its last act.
    func markClosed(_ error: AMQPError?) {
        let (commands, waiters) = state.withLock { state in
            state.phase = .closed(error)
            let taken = (state.commands, state.endWaiters)
            state.commands.removeAll()
            state.endWaiters.removeAll()
            return taken
        }
        let refusal = error ?? Self.refusal(for: .closed(nil))
        for command in commands { command.fail(refusal) }
        for waiter in waiters { waiter.resume(returning: error) }
    }

    private static func refusal(for phase: Phase) -> AMQPError {
        switch phase {
        case .closed(let error?):
            return error
        case .starting:
            return AMQPError(code: .connectionClosed, call: "submit", message: "the connection is not open yet")
        default:
            return AMQPError(code: .connectionClosed, call: "submit", message: "the connection was closed")
        }
    }
}
