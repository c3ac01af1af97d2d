import HeraldAMQP
import HeraldCore
import Logging

/// Acknowledges settled messages on the connection they came from: the one place that does, for
/// the pipeline and the partition ingest alike. An acknowledgement that
/// cannot be sent (the connection is gone) is dropped: the broker delivers the message again,
/// and the journal makes its deliveries skip.
struct Acknowledger: Sendable {
    let metrics: WorkerMetrics
    let logger: Logger

    func ack(_ messages: [TrackedMessage]) {
        for message in messages { ack(message) }
    }

    /// Acknowledges one message; false when the acknowledgement could not be sent. `counted`:
    /// counts it in `herald_messages_acked_total` (the ingest counts its originals as ingested
    /// instead).
    @discardableResult
    func ack(_ message: TrackedMessage, counted: Bool = true) -> Bool {
        do {
            try message.connection.ack(message.delivery)
            if counted { metrics.acked() }
            return true
        } catch {
            logger.debug("Acknowledgement not sent; the broker will deliver the message again", metadata: [LogKey.error: "\(error)"])
            return false
        }
    }
}
