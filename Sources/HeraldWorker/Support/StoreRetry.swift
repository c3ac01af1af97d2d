import HeraldCore
import HeraldStore
import Logging
import Metrics

/// Runs a store call until it succeeds, backing off between failures, or until the worker's stop
/// reaches `giveUp` (stopping, or aborted for the writes a graceful stop waits for). A transient failure (the database restarting)
/// is logged as a warning, any other as an error; both are retried, because a message whose
/// deliveries cannot be looked up or recorded must not be acknowledged, and dropping it would
/// lose it. Each failure counts in `herald_store_errors_total` (the dashboard's and alerts'
/// database errors).
struct StoreRetry: Sendable {
    let stop: StopSignal
    let initialDelay: Duration
    let maxDelay: Duration
    let logger: Logger
    private let errors = Counter(label: "herald_store_errors_total")

    /// The call's value, or nil when it gave up.
    func run<T>(
        _ operation: String, giveUp: StopSignal.Phase = .stopping,
        _ body: () async throws(StoreError) -> T
    ) async -> T? {
        var backoff = Backoff(initial: initialDelay, maximum: maxDelay)
        while true {
            if stop.phase >= giveUp { return nil }
            do {
                return try await body()
            } catch {
                errors.increment()
                let delay = backoff.next()
                let metadata: Logger.Metadata = [LogKey.error: "\(error)", LogKey.retryIn: "\(delay)", LogKey.operation: "\(operation)"]
                if error.isTransient {
                    logger.warning("Store call failed; retrying", metadata: metadata)
                } else {
                    logger.error("Store call failed with a non-transient error; retrying", metadata: metadata)
                }
                guard await stop.sleep(for: delay, until: giveUp) else { return nil }
            }
        }
    }
}
