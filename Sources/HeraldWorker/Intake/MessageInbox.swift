import HeraldAMQP

/// The buffer between a broker consumer (filled by the pump task that iterates it) and the
/// intake, which takes everything buffered at once, up to a chunk size: that is what turns a
/// stream of messages into batches for the store. Bounded by the prefetch (the broker sends no
/// more until messages are settled). The consumer's end (``BatchingMailbox/end(error:)``) after
/// an error drops what is buffered: the connection is gone and the broker requeues it, perhaps to
/// another process, so it is never started on here.
typealias MessageInbox = BatchingMailbox<TrackedMessage>

extension BatchingMailbox<TrackedMessage> {
    /// The pump: posts what `consumer` delivers, one socket read's batch at a time (one lock per
    /// batch, not per message), as `accept` makes it into messages (nil: the batch is not taken
    /// here). Returns when the consumer ends; throws its error. Ending the inbox is the caller's.
    func fill(from consumer: AMQPConsumer, _ accept: ([AMQPDelivery]) -> [TrackedMessage]?) async throws {
        var deliveries = consumer.makeAsyncIterator()
        while let batch = try await deliveries.nextBatch() {
            guard let messages = accept(batch) else { continue }
            post(contentsOf: messages)
        }
    }
}
