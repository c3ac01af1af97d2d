import Foundation
import HeraldAMQP
import HeraldCore
import HeraldStore
import Logging

/// Sends a refused message to the dead-letter queue: publishes a copy (original body and
/// properties plus the ``DeadLetterHeaders``) to the topology's dead-letter exchange, waits for
/// the broker's confirm, records the reason in the store; only then may the original be
/// acknowledged. Never log-and-drop: when the copy cannot be published (connection lost,
/// stopping) the original stays unacknowledged and comes back.
struct DeadLetterPublisher: Sendable {
    let topology: HeraldTopology
    let store: Store
    let retry: StoreRetry
    let metrics: WorkerMetrics
    let stop: StopSignal
    let logger: Logger
    let backoffInitial: Duration
    let backoffMax: Duration

    /// True once the dead letter is published and recorded (acknowledge the original then).
    func deadLetter(
        _ message: TrackedMessage, code: DeadLetterCode, reason: String, eventId: String?, messageKey: String
    ) async -> Bool {
        let id = UUID().uuidString.lowercased()
        let properties = DeadLetterHeaders.deadLetterProperties(
            original: message.delivery.properties, code: code, reason: reason, id: id, queue: topology.queue, eventId: eventId, failedAt: Date()
        )
        let copy = AMQPOutgoingMessage(
            exchange: topology.deadLetterExchange, routingKey: topology.deadLetterRoutingKey, body: message.delivery.body, properties: properties,
            mandatory: true
        )
        var metadata: Logger.Metadata = [
            LogKey.code: "\(code)", LogKey.error: "\(reason)", LogKey.messageKey: "\(messageKey)", LogKey.deadLetterId: "\(id)",
        ]
        if let eventId { metadata[LogKey.eventId] = "\(eventId)" }
        var backoff = Backoff(initial: backoffInitial, maximum: backoffMax)
        while true {
            do {
                try await message.connection.publish(copy)
                break
            } catch {
                var failure = metadata
                failure["herald.broker_error"] = "\(error)"
                if error.endsConnection || stop.isStopping {
                    logger.warning("Dead letter not published; the message stays in its queue", metadata: failure)
                    return false
                }
                logger.error("Dead letter refused by the broker; retrying", metadata: failure)
                guard await stop.sleep(for: backoff.next()) else { return false }
            }
        }
        let letter = DeadLetter(id: id, messageKey: messageKey, queue: topology.queue, errorCode: code.rawValue, reason: reason, eventId: eventId)
        guard await retry.run("DeadLetterRepository.record", { () async throws(StoreError) in try await store.deadLetters.record(letter) }) != nil else {
            return false
        }
        metrics.deadLettered(code: code)
        logger.warning("Message sent to the dead-letter queue", metadata: metadata)
        return true
    }
}
