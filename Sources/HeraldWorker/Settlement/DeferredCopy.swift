import Foundation
import HeraldAMQP
import HeraldCore
import Logging
import Synchronization

/// Keeps the deliveries of a failing provider in the broker instead of in memory: a settled
/// message that has deferred deliveries (``TrackedMessage/deferredUntil``) is republished,
/// unchanged but for the ``countHeader``, to its queue's *wait queue* `<queue>.wait` with a
/// per-message expiration; when it expires the broker dead-letters it back to `<queue>` (the wait
/// queue's dead-letter exchange is the default one, its routing key the queue). The original is
/// acknowledged once the broker confirmed the copy; if the copy cannot be published, the
/// original is rejected with requeue, so it comes back at once and is deferred again or sent.
///
/// When the copy comes back, its message is known: the journal's `deferred` rows are sent at
/// their positions (not in doubt), its terminal rows skipped, and `AvoidDublication` does not
/// drop it. Messages expire at the head of the wait queue only (RabbitMQ's rule), so a copy may
/// come back later than asked, by at most the longest open period
/// (``HeraldCore/CircuitBreaker/Policy/maximumOpen``).
///
/// The wait queue is declared on first use (durable, the topology's queue type) and remembered.
final class DeferredCopy: Sendable {
    /// How many times the message was deferred; its presence marks a copy from the wait queue.
    static let countHeader = "x-herald-deferred"

    static func waitQueue(of queue: String) -> String { queue + ".wait" }

    let queueType: AMQPQueueType
    let metrics: WorkerMetrics
    let logger: Logger
    private let declared = Mutex<Set<String>>([])

    init(queueType: AMQPQueueType, metrics: WorkerMetrics, logger: Logger) {
        self.queueType = queueType
        self.metrics = metrics
        self.logger = logger
    }

    /// Republishes `messages` (all settled, all with ``TrackedMessage/deferredUntil``) and
    /// acknowledges each one whose copy was confirmed. Off the caller's task.
    func republish(_ messages: [TrackedMessage], acknowledger: Acknowledger) {
        guard !messages.isEmpty else { return }
        Task {
            // One batch per connection (a reconnect may leave messages of two sessions here).
            var byConnection: [ObjectIdentifier: [TrackedMessage]] = [:]
            for message in messages { byConnection[ObjectIdentifier(message.connection), default: []].append(message) }
            for group in byConnection.values { await republish(group, on: group[0].connection, acknowledger: acknowledger) }
        }
    }

    private func republish(_ messages: [TrackedMessage], on connection: AMQPConnection, acknowledger: Acknowledger) async {
        let now = ContinuousClock.now
        var failed = Set<Int>()
        do {
            for queue in Set(messages.map(\.queue)) { try await declareWaitQueue(for: queue, on: connection) }
            try await connection.publishBatch(messages.map { copy(of: $0, now: now) })
        } catch {
            failed = Set(error.failedMessageIndices.isEmpty ? Array(messages.indices) : error.failedMessageIndices)
            logger.warning(
                "Deferred messages not republished to the wait queue; they are requeued",
                metadata: [
                    LogKey.error: "\(error)", LogKey.count: "\(failed.count)",
                ])
            // The queue may have been deleted: declare it again next time.
            declared.withLock { $0.removeAll() }
        }
        for (index, message) in messages.enumerated() {
            if failed.contains(index) {
                try? connection.reject(message.delivery, requeue: true)
            } else {
                acknowledger.ack(message)
            }
        }
        metrics.republished(messages.count - failed.count)
    }

    private func copy(of message: TrackedMessage, now: ContinuousClock.Instant) -> AMQPOutgoingMessage {
        var properties = message.delivery.properties
        let count = properties.headers[Self.countHeader]?.intValue ?? 0
        properties.headers[Self.countHeader] = .int(count + 1)
        let wait = max((message.deferredUntil ?? now) - now, .seconds(1))
        properties.expiration = String(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
        return AMQPOutgoingMessage(routingKey: Self.waitQueue(of: message.queue), body: message.delivery.body, properties: properties, mandatory: true)
    }

    private func declareWaitQueue(for queue: String, on connection: AMQPConnection) async throws(AMQPError) {
        let name = Self.waitQueue(of: queue)
        guard !declared.withLock({ $0.contains(name) }) else { return }
        let state = try await connection.declareQueue(
            AMQPQueue(
                name: name, durable: true, type: queueType, deadLetterExchange: "", deadLetterRoutingKey: queue
            ))
        if let warning = state.warning {
            logger.warning("Wait queue exists with other settings; using it as it is", metadata: [LogKey.queue: "\(name)", LogKey.error: "\(warning)"])
        }
        declared.withLock { _ = $0.insert(name) }
    }
}
