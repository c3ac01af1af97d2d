import Synchronization

/// A request between the caller's task and the driver thread: holds the caller's continuation
/// and makes sure it is resumed exactly once, by whoever gets there first: the driver (response
/// or error), the task's cancellation handler, or shutdown.
final class PendingRequest: Sendable {
    private enum Phase {
        /// Made, continuation not yet installed.
        case created
        case waiting(CheckedContinuation<HTTPResponse, any Error>)
        case finished
    }

    let id: UInt64
    let request: HTTPRequest
    private let phase = Mutex<Phase>(.created)

    init(id: UInt64, request: HTTPRequest) {
        self.id = id
        self.request = request
    }

    /// Stores the continuation. Returns false when the request was already finished (cancelled
    /// before it could wait); the caller then resumes the continuation itself.
    func install(_ continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
        phase.withLock { phase in
            guard case .created = phase else { return false }
            phase = .waiting(continuation)
            return true
        }
    }

    /// Finishes the request with `result`, resuming the caller if it waits. Returns false if it
    /// had been finished before (the result is then dropped). Resumes outside the lock; resuming
    /// only schedules the caller's task, it never runs it on this thread's stack.
    @discardableResult
    func finish(_ result: Result<HTTPResponse, any Error>) -> Bool {
        let (won, continuation) = phase.withLock { phase -> (Bool, CheckedContinuation<HTTPResponse, any Error>?) in
            switch phase {
            case .created:
                phase = .finished
                return (true, nil)
            case .waiting(let continuation):
                phase = .finished
                return (true, continuation)
            case .finished:
                return (false, nil)
            }
        }
        continuation?.resume(with: result)
        return won
    }

    var isFinished: Bool {
        phase.withLock { phase in
            if case .finished = phase { return true }
            return false
        }
    }
}
