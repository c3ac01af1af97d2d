import Synchronization

/// Runs request handlers as children of one task the server owns, so that shutdown can cancel
/// every one of them and wait for them; the event loop hands jobs over through an `AsyncStream`.
/// It also counts the delayed answers waiting for their timer, so that shutdown's grace period
/// waits for those too.
final class HandlerDispatcher: Sendable {
    typealias Job = @Sendable () async -> Void

    private let jobs: AsyncStream<Job>.Continuation
    private let root: Task<Void, Never>
    private let runningCount = Atomic<Int>(0)

    private init(jobs: AsyncStream<Job>.Continuation, root: Task<Void, Never>) {
        self.jobs = jobs
        self.root = root
    }

    /// Starts the owning task (called from ``HTTP2Server/start(configuration:logger:handler:)``).
    static func start() -> HandlerDispatcher {
        let (stream, continuation) = AsyncStream.makeStream(of: Job.self)
        let root = Task {
            await withDiscardingTaskGroup { group in
                for await job in stream {
                    group.addTask { await job() }
                }
            }
        }
        return HandlerDispatcher(jobs: continuation, root: root)
    }

    /// Handlers started and not yet finished, and delayed answers not yet written.
    var running: Int { runningCount.load(ordering: .relaxed) }

    /// A delayed answer's timer was set on an event loop.
    func timerStarted() {
        runningCount.add(1, ordering: .relaxed)
    }

    /// A delayed answer's timer fired.
    func timerEnded() {
        runningCount.subtract(1, ordering: .relaxed)
    }

    /// Queues `job`; dropped (never run) once the dispatcher has stopped.
    func submit(_ job: @escaping Job) {
        runningCount.add(1, ordering: .relaxed)
        let result = jobs.yield { [self] in
            await job()
            runningCount.subtract(1, ordering: .relaxed)
        }
        if case .terminated = result {
            runningCount.subtract(1, ordering: .relaxed)
        }
    }

    /// Stops taking jobs, cancels running handlers and waits for them to return.
    func stop() async {
        jobs.finish()
        root.cancel()
        await root.value
    }
}
