import Foundation
import HeraldAMQP
import HeraldCore
import HeraldDelivery
import Logging
import Metrics
import ServiceLifecycle

/// The gauges and counters that dashboards and alerts need besides the worker's own
/// (`deploy/grafana/herald.json`, `deploy/prometheus/alerts.yaml`), gathered off the hot path:
/// every ``interval`` this service reads what is already counted elsewhere and publishes it.
///
/// - `herald_queue_messages{queue,role}`: ready messages in the main queue (`role="main"`), the
///   dead-letter queue (`dead_letter`) and, with partitions, each partition queue (`partition`),
///   by a passive declare on a connection of its own; `-1` while the broker cannot be asked.
/// - `herald_provider_deliveries_total{provider,outcome}` (`sent`, `token_dead`, `retry`,
///   `failed`) and `herald_provider_credential_errors_total{provider}` (APNs refused the
///   provider token, FCM answered 401: an expired or revoked key), from the senders' statistics;
///   zero with the log or null sender.
/// - `herald_apns_certificate_expiry_timestamp_seconds`: when the earliest APNs client
///   certificate expires (Unix time); `0` with token authentication or no APNs.
///
/// Every series is created at start, so that the scrape names them before anything happened.
struct OperationsMetrics: Service {
    let amqp: AMQPConfiguration
    let topology: HeraldTopology
    let partitionQueues: [String]
    let sender: any PushSender
    let certificateExpiry: Date?
    let logger: Logger
    var interval: Duration = .seconds(10)

    static let providers = Platform.allCases.map(\.provider)
    static let outcomes = ["sent", "token_dead", "retry", "failed"]

    /// Until the graceful shutdown (or cancellation).
    func run() async throws {
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    private func loop() async {
        var queues: [(name: String, gauge: Gauge)] = [
            (topology.queue, Gauge(label: "herald_queue_messages", dimensions: [("queue", topology.queue), ("role", "main")])),
            (topology.deadLetterQueue, Gauge(label: "herald_queue_messages", dimensions: [("queue", topology.deadLetterQueue), ("role", "dead_letter")])),
        ]
        for name in partitionQueues {
            queues.append((name, Gauge(label: "herald_queue_messages", dimensions: [("queue", name), ("role", "partition")])))
        }
        var counters: [String: Counter] = [:]
        for provider in Self.providers {
            for outcome in Self.outcomes {
                counters["\(provider)/\(outcome)"] = Counter(
                    label: "herald_provider_deliveries_total", dimensions: [("provider", provider), ("outcome", outcome)])
            }
            counters["\(provider)/credential"] = Counter(label: "herald_provider_credential_errors_total", dimensions: [("provider", provider)])
        }
        Gauge(label: "herald_apns_certificate_expiry_timestamp_seconds").record(certificateExpiry?.timeIntervalSince1970 ?? 0)

        var last: [String: SenderStatistics] = [:]
        var connection: AMQPConnection?
        while !Task.isCancelled {
            // Sender statistics: counters move by what changed since the last look.
            for (provider, statistics) in await Self.statistics(of: sender) {
                let before = last[provider] ?? SenderStatistics()
                counters["\(provider)/sent"]?.increment(by: Int64(max(0, statistics.sent - before.sent)))
                counters["\(provider)/token_dead"]?.increment(by: Int64(max(0, statistics.tokenDead - before.tokenDead)))
                counters["\(provider)/retry"]?.increment(by: Int64(max(0, statistics.retryLater - before.retryLater)))
                counters["\(provider)/failed"]?.increment(by: Int64(max(0, statistics.permanentFailures - before.permanentFailures)))
                counters["\(provider)/credential"]?.increment(by: Int64(max(0, statistics.credentialRetries - before.credentialRetries)))
                last[provider] = statistics
            }
            // Queue depths.
            do {
                if connection == nil || connection?.isOpen != true {
                    var configuration = amqp
                    configuration.connectTimeout = .seconds(2)
                    configuration.connectionName = "herald metrics"
                    connection = try await AMQPConnection.connect(configuration, logger: logger)
                }
                for queue in queues {
                    do {
                        queue.gauge.record(Double(try await connection!.queueState(queue.name).messageCount))
                    } catch let error where error.code == .notFound {
                        queue.gauge.record(0)
                    }
                }
            } catch {
                for queue in queues { queue.gauge.record(-1) }
                logger.debug("Queue depths unavailable", metadata: ["herald.error": "\(error)"])
                if let open = connection { await open.close() }
                connection = nil
            }
            try? await Task.sleep(for: interval)
        }
        await connection?.close()
    }

    /// The provider senders' statistics (APNs, FCM), when the sender is the providers' router.
    static func statistics(of sender: any PushSender) async -> [(String, SenderStatistics)] {
        guard let routing = sender as? RoutingSender else { return [] }
        var result: [(String, SenderStatistics)] = []
        if let apns = routing.ios as? APNsSender { result.append(("apns", await apns.statistics)) }
        if let fcm = routing.android as? FCMSender { result.append(("fcm", await fcm.statistics)) }
        return result
    }
}
