import HeraldAMQP
import Logging

/// Acknowledges settled messages on the connection they came from. An acknowledgement that
/// cannot be sent (the connection is gone) is dropped: the broker delivers the message again,
/// and the journal makes its deliveries skip.
struct Acknowledger: Sendable {
    let metrics: WorkerMetrics
    let logger: Logger

    func ack(_ messages: [TrackedMessage]) {
        for message in messages { ack(message) }
    }

    func ack(_ message: TrackedMessage) {
        do {
            try message.connection.ack(message.delivery)
            metrics.acked()
        } catch {
            logger.debug("Acknowledgement not sent; the broker will deliver the message again", metadata: [LogKey.error: "\(error)"])
        }
    }
}
