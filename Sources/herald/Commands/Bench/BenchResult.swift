import Foundation

/// What `herald bench` measured; printed as a table or, with `--json`, as JSON.
struct BenchResult: Codable, Sendable {
    var build: String
    var date: String
    var events: Int
    var deliveriesPerRun: Int
    var users: Int
    var broadcastDevices: Int
    var queueType: String
    var prefetch: Int
    var lanes: Int
    var bareSeconds: Double
    var bareRate: Double
    var pipelineSeconds: Double
    var pipelineEventRate: Double
    var pipelineDeliveryRate: Double
    var ratio: Double
    var latencyEvents: Int
    var latencyRate: Int
    var latencyP50Milliseconds: Double?
    var latencyP99Milliseconds: Double?
    var peakRSSMegabytes: Double?
    var synchronousCommit: String?
    /// Per delivery, over the pipeline run.
    var pipelineCosts: BenchProbe.Costs?

    var table: String {
        func n(_ value: Double) -> String { String(format: "%.0f", value) }
        func ms(_ value: Double?) -> String { value.map { String(format: "%.1f ms", $0) } ?? "-" }
        return """
            Herald benchmark (\(build) build, \(date))
              workload: \(events) events (80% one user, 15% three users, 5% broadcast to \(broadcastDevices) devices) → \(deliveriesPerRun) deliveries; \(users) users
              broker: \(queueType) durable queue, persistent messages, prefetch \(prefetch); pipeline: \(lanes) lanes, null sender; PostgreSQL synchronous_commit=\(synchronousCommit ?? "?")

              run                            seconds    events/s   deliveries/s
              bare consumer (consume + ack)  \(String(format: "%7.2f", bareSeconds))  \(n(bareRate).leftPad(10))              -
              full pipeline (null sender)    \(String(format: "%7.2f", pipelineSeconds))  \(n(pipelineEventRate).leftPad(10))  \(n(pipelineDeliveryRate).leftPad(13))
              pipeline / bare consumer       \(String(format: "%.0f%%", ratio * 100))
            \(costsTable)

              publish→sent latency at a steady \(latencyRate) events/s (\(latencyEvents) events): p50 \(ms(latencyP50Milliseconds)), p99 \(ms(latencyP99Milliseconds))
              peak RSS: \(peakRSSMegabytes.map { String(format: "%.0f MB", $0) } ?? "-")
            """
    }
}

extension BenchResult {
    /// Per-delivery costs of the pipeline run.
    var costsTable: String {
        guard let c = pipelineCosts else { return "" }
        func us(_ v: Double?) -> String { v.map { String(format: "%.1f µs", $0) } ?? "-" }
        func cores(_ v: Double?) -> String { v.map { String(format: "%.2f", $0) } ?? "-" }
        return """

              per delivery (pipeline run)    worker CPU \(us(c.workerCPUMicroseconds)), PostgreSQL CPU \(us(c.postgresCPUMicroseconds)), RabbitMQ CPU \(us(c.brokerCPUMicroseconds))
                                             WAL \(c.walBytes.map { String(format: "%.0f bytes", $0) } ?? "-"), row writes \(c.rowWrites.map { String(format: "%.2f", $0) } ?? "-") (journal, messages, devices)
              cores busy                     worker \(cores(c.workerCores)), PostgreSQL \(cores(c.postgresCores)), RabbitMQ \(cores(c.brokerCores))
            """
    }
}

extension String {
    fileprivate func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
