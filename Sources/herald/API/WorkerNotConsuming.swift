import HeraldAPI
import HeraldWorker

/// Why `/readyz` fails in `herald serve`, and in `herald worker` with `worker.metrics_listen`,
/// while the worker connects or reconnects to the broker: such a process should not yet get
/// traffic or count as up in a rollout.
struct WorkerNotConsuming: Error, CustomStringConvertible {
    var description: String { "the worker is not consuming (connecting to the broker)" }

    /// The `/readyz` check "the worker consumes".
    static func check(_ worker: WorkerService) -> APIDependencies.ReadinessCheck {
        { guard worker.isConsuming else { throw WorkerNotConsuming() } }
    }
}
