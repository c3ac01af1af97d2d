/// Why `/readyz` fails in `herald serve` and `herald worker` with `worker.metrics_listen` while the worker
/// connects or reconnects to the broker: such a process should not yet get traffic or count as
/// up in a rollout.
struct WorkerNotConsuming: Error, CustomStringConvertible {
    var description: String { "the worker is not consuming (connecting to the broker)" }
}
