import Metrics
import Prometheus

/// The process's metrics registry: swift-metrics is bootstrapped with a Prometheus factory the
/// first time ``registry`` is read (once per process, as `MetricsSystem` requires), so `herald
/// api`, `herald serve` and the worker all report to it. Names and labels are sanitized to
/// Prometheus' alphabet (`hb.requests` → `hb_requests`).
enum PrometheusMetrics {
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // The library's buckets end at 10 s; an alert on a p99 above 10 s
        // (deploy/prometheus/alerts.yaml) needs finite buckets beyond it to ever fire.
        factory.defaultDurationHistogramBuckets += [.seconds(30), .seconds(60), .seconds(120), .seconds(300)]
        factory.nameAndLabelSanitizer = { name, labels in
            (sanitize(name), labels.map { (sanitize($0.0), $0.1) })
        }
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    /// The exposition for `/metrics`.
    static let render: @Sendable () -> [UInt8] = { registry.emitToBuffer() }

    static func sanitize(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") ? $0 : "_" })
    }
}
