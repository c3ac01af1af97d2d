import DequeModule
import Logging
import Synchronization

/// Up to `poolSize` ``PostgresConnection``s, created lazily, lent to one caller at a time.
///
/// Waiting callers are served first come, first served: a returned connection goes straight
/// to the oldest waiter. A waiter whose task is cancelled leaves the queue with
/// ``PostgresError/Code/cancelled``. Broken connections stay in the pool and repair
/// themselves on next use (see ``PostgresConnection``).
final class ConnectionPool: Sendable {
    private typealias Waiter = CheckedContinuation<Result<PostgresConnection, PostgresError>, Never>

    private struct State {
        var idle: [PostgresConnection] = []
        var all: [PostgresConnection] = []
        /// Connections created or being created (never more than the pool size).
        var created = 0
        var waiters = Deque<(id: UInt64, continuation: Waiter)>()
        var nextWaiterID: UInt64 = 0
        var closed = false
        var lent = 0
        var closeWaiters: [CheckedContinuation<Void, Never>] = []

        mutating func popWaiter() -> Waiter? {
            waiters.popFirst()?.continuation
        }
    }

    private enum Decision {
        case use(PostgresConnection)
        case create(label: String)
        case fail(PostgresError)
        case wait
    }

    private let state = Mutex(State())
    private let configuration: PostgresConfiguration
    private let logger: Logger
    let poolLabel: String

    init(configuration: PostgresConfiguration, logger: Logger, label: String) {
        self.configuration = configuration
        self.logger = logger
        self.poolLabel = label
    }

    /// How many callers are waiting for a connection (for tests and metrics).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// A connection for the caller's exclusive use until ``release(_:)``.
    func acquire() async throws(PostgresError) -> PostgresConnection {
        let decision: Decision = state.withLock { state in
            if state.closed { return .fail(PostgresError(code: .closed, message: "the client is closed")) }
            if let connection = state.idle.popLast() {
                state.lent += 1
                return .use(connection)
            }
            if state.created < configuration.poolSize {
                state.created += 1
                state.lent += 1
                return .create(label: "\(poolLabel)-\(state.created)")
            }
            return .wait
        }
        switch decision {
        case .use(let connection):
            return connection
        case .create(let label):
            let connection = PostgresConnection(configuration: configuration, logger: logger, label: label)
            let closed = state.withLock { state in
                state.all.append(connection)
                return state.closed
            }
            if closed {
                release(connection)
                throw PostgresError(code: .closed, message: "the client is closed")
            }
            return connection
        case .fail(let error):
            throw error
        case .wait:
            return try await waitForConnection()
        }
    }

    private func waitForConnection() async throws(PostgresError) -> PostgresConnection {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let result: Result<PostgresConnection, PostgresError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                let immediate: Result<PostgresConnection, PostgresError>? = state.withLock { state in
                    if state.closed { return .failure(PostgresError(code: .closed, message: "the client is closed")) }
                    if Task.isCancelled {
                        return .failure(PostgresError(code: .cancelled, message: "cancelled while waiting for a connection"))
                    }
                    // A connection may have come back between the first look and now.
                    if let connection = state.idle.popLast() {
                        state.lent += 1
                        return .success(connection)
                    }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: .failure(PostgresError(code: .cancelled, message: "cancelled while waiting for a connection")))
        }
        return try result.get()
    }

    /// Gives a connection back: to the oldest waiter if any, else to the idle list.
    func release(_ connection: PostgresConnection) {
        enum Next {
            case handOff(Waiter)
            case keep
            case close([CheckedContinuation<Void, Never>])
        }
        let next: Next = state.withLock { state in
            if state.closed {
                state.lent -= 1
                state.idle.append(connection)
                guard state.lent == 0 else { return .keep }
                let waiters = state.closeWaiters
                state.closeWaiters.removeAll()
                return .close(waiters)
            }
            if let waiter = state.popWaiter() { return .handOff(waiter) }
            state.lent -= 1
            state.idle.append(connection)
            return .keep
        }
        switch next {
        case .handOff(let waiter): waiter.resume(returning: .success(connection))
        case .keep: break
        case .close(let waiters): for waiter in waiters { waiter.resume() }
        }
    }

    /// Refuses new work, fails waiters, waits for lent connections to come back, then closes
    /// every connection (each finishes its queued statements first).
    func close() async {
        let (waiters, mustWait) = state.withLock { state in
            state.closed = true
            let waiters = state.waiters.map(\.continuation)
            state.waiters.removeAll()
            return (waiters, state.lent > 0)
        }
        for waiter in waiters {
            waiter.resume(returning: .failure(PostgresError(code: .closed, message: "the client is closed")))
        }
        if mustWait {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state in
                    if state.lent == 0 { return true }
                    state.closeWaiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        }
        let connections = state.withLock { state in
            let all = state.all
            state.all.removeAll()
            state.idle.removeAll()
            return all
        }
        for connection in connections { await connection.close() }
    }
}
