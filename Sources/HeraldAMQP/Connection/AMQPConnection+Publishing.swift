import Foundation

/// Publishing with publisher confirms.
extension AMQPConnection {
    /// Publishes one message and returns once the broker confirmed it (`basic.ack`): from then on
    /// the broker is responsible for it (persisted, for persistent messages on durable queues).
    ///
    /// Concurrent calls pipeline: up to `publishWindow` publishes await confirms at once. Cancelling
    /// the calling task does not un-publish; the call still waits for the outcome.
    /// - Throws: ``AMQPError`` with ``AMQPError/Code/publishNacked`` (`basic.nack`),
    ///   ``AMQPError/Code/unroutable`` (`mandatory` and no queue bound), ``AMQPError/Code/notFound``
    ///   (no such exchange: the broker closed the publishing channel), or a connection-level code
    ///   (the outcome is then unknown: the message may or may not have been taken).
    public func publish(_ message: AMQPOutgoingMessage) async throws(AMQPError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, AMQPError>, Never>) in
            do throws(AMQPError) {
                try core.submit(.publish(message, completion: { continuation.resume(returning: $0) }))
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        try result.get()
    }

    /// Publishes one message; see ``publish(_:)``.
    public func publish(
        _ body: Data,
        exchange: String = "",
        routingKey: String,
        properties: AMQPProperties = AMQPProperties(),
        mandatory: Bool = false
    ) async throws(AMQPError) {
        try await publish(
            AMQPOutgoingMessage(exchange: exchange, routingKey: routingKey, body: body, properties: properties, mandatory: mandatory)
        )
    }

    /// Publishes many messages in order, pipelined within `publishWindow`, and returns once every
    /// one is confirmed. The fastest way to send many messages (benchmark, DLQ replay, ingest).
    ///
    /// Every message is attempted even when some fail.
    /// - Throws: ``AMQPError`` whose ``AMQPError/failedMessageIndices`` lists the messages that were
    ///   not confirmed (nacked, returned, or pending when the connection died); its code is the
    ///   first failure's. Messages not listed were confirmed.
    public func publishBatch(_ messages: [AMQPOutgoingMessage]) async throws(AMQPError) {
        guard !messages.isEmpty else { return }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, AMQPError>, Never>) in
            do throws(AMQPError) {
                try core.submit(.publishBatch(messages, completion: { continuation.resume(returning: $0) }))
            } catch {
                var failed = error
                failed.failedMessageIndices = Array(messages.indices)
                continuation.resume(returning: .failure(failed))
            }
        }
        try result.get()
    }
}
