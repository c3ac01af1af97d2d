import Foundation
import HeraldAMQP
import HeraldCore
import HeraldDelivery
import HeraldWorker

extension BenchResult {
    /// `--ingest N`: the workload through the partitioned path in one process, the ingest's own
    /// rate apart (issue 44: at what rate one ingest becomes the limit).
    struct Ingest: Codable, Sendable {
        var partitions: Int
        var events: Int
        /// From the first event ingested to the last.
        var ingestSeconds: Double
        var ingestRate: Double
        /// From the worker's start to the last delivery.
        var seconds: Double
        var deliveries: Int
        var eventRate: Double
    }
}

extension BenchRunner {
    /// `events` of the workload published to a main queue with `partitions` partition queues,
    /// then ingested and delivered (null sender) by one worker process: how fast the ingest
    /// copied them (from the first copy to the last), and how fast the whole path went. The two
    /// share the process and its cores, so the ingest's figure is what it reaches beside the
    /// pipeline it feeds.
    func ingest(events: Int, partitions: Int) async throws -> BenchResult.Ingest {
        var configuration = try await topology("ingest", lanes: base.lanes)
        configuration.partitions = partitions
        deleteAtTheEnd(configuration.partitionLayout?.queueNames ?? [])
        let runSalt = salt("ingest")
        let deliveries = workload.expectedDeliveries(count: events, salt: runSalt).values.reduce(0, +)
        progress("ingest: publishing \(events) events")
        try await publish(count: events, exchange: configuration.topology.exchange, routingKey: configuration.topology.routingKey, salt: runSalt)
        progress("ingest: \(partitions) partitions, one process")
        var first: ContinuousClock.Instant?
        var ingestSeconds = 0.0
        let (seconds, delivered, _) = try await drain(configuration, sender: NullSender()) { worker in
            try await Self.wait(
                until: events,
                of: {
                    let ingested = worker.statistics.ingested
                    if ingested > 0, first == nil { first = .now }
                    return ingested
                }, what: "the ingest")
            ingestSeconds = first.map { (ContinuousClock.now - $0).seconds } ?? 0
            try await Self.wait(until: deliveries, of: { worker.statistics.delivered }, what: "the partitions to drain")
        }
        return BenchResult.Ingest(
            partitions: partitions, events: events, ingestSeconds: ingestSeconds, ingestRate: Double(events) / max(ingestSeconds, 0.001),
            seconds: seconds, deliveries: delivered, eventRate: Double(events) / seconds)
    }
}
