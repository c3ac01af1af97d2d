import Synchronization

/// A request between its caller and the driver thread: holds what to call with the outcome and
/// makes sure it is called exactly once, by whoever gets there first: the driver (response or
/// error), a task's cancellation handler, or shutdown.
final class PendingRequest: Sendable {
    typealias Completion = @Sendable (Result<HTTPClientResponse, any Error>) -> Void

    private enum Phase {
        /// Made, completion not yet installed (``HTTPClient/execute(_:)`` installs it from
        /// inside its continuation).
        case created
        case waiting(Completion)
        case finished
    }

    let id: UInt64
    let request: HTTPClientRequest
    private let phase: Mutex<Phase>

    init(id: UInt64, request: HTTPClientRequest, completion: Completion? = nil) {
        self.id = id
        self.request = request
        self.phase = Mutex(completion.map { .waiting($0) } ?? .created)
    }

    /// Stores the completion. Returns false when the request was already finished (cancelled
    /// before it could wait); the caller then completes it itself.
    func install(_ completion: @escaping Completion) -> Bool {
        phase.withLock { phase in
            guard case .created = phase else { return false }
            phase = .waiting(completion)
            return true
        }
    }

    /// Finishes the request with `result`, calling the completion if one is installed. Returns
    /// false if it had been finished before (the result is then dropped). Calls outside the
    /// lock; a continuation's completion only schedules its task.
    @discardableResult
    func finish(_ result: Result<HTTPClientResponse, any Error>) -> Bool {
        let (won, completion) = phase.withLock { phase -> (Bool, Completion?) in
            switch phase {
            case .created:
                phase = .finished
                return (true, nil)
            case .waiting(let completion):
                phase = .finished
                return (true, completion)
            case .finished:
                return (false, nil)
            }
        }
        completion?(result)
        return won
    }

    var isFinished: Bool {
        phase.withLock { phase in
            if case .finished = phase { return true }
            return false
        }
    }
}
