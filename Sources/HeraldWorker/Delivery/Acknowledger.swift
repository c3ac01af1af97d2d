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

    /// Acknowledges messages, each run of them from one connection in one call (one command, at
    /// most one wake of its thread).
    func ack(_ messages: [TrackedMessage]) {
        var start = messages.startIndex
        while start < messages.endIndex {
            let connection = messages[start].connection
            var end = start + 1
            while end < messages.endIndex, messages[end].connection === connection { end += 1 }
            do {
                try connection.ack(messages[start..<end].lazy.map(\.delivery))
                metrics.acked(end - start)
            } catch {
                logger.debug(
                    "Acknowledgements not sent; the broker will deliver the messages again",
                    metadata: [LogKey.error: "\(error)", LogKey.count: "\(end - start)"])
            }
            start = end
        }
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
