/// A running consumer: an `AsyncSequence` of deliveries, plus the calls that settle them.
///
/// Iterate it from one task (it is a single-pass sequence). It ends:
/// - normally (`nil`) after ``cancel()`` once the deliveries already sent have been handed out,
///   or after ``AMQPConnection/close()``;
/// - by throwing ``AMQPError`` with ``AMQPError/Code/connectionLost`` when the connection dies,
///   ``AMQPError/Code/consumerCancelled`` when the broker cancels it (queue deleted), or a channel
///   code when the broker closes its channel.
///
/// Backpressure: the buffer between the connection thread and your loop holds at most `prefetch`
/// deliveries, because the broker sends no more until some are settled.
///
/// Batches: the connection thread hands over what one read of the socket brought, at once; the
/// iterator's ``AsyncIterator/nextBatch()`` takes it whole (one resumption per batch), `next()`
/// one delivery at a time from it.
///
/// Graceful shutdown: call ``cancel()``, keep iterating until the sequence ends, settle what you
/// hold (acks still go out: the channel stays open until every delivery is settled), then close
/// the connection. If the iterating task is cancelled, or the consumer is released, the consumer
/// is cancelled and its channel closed: every unsettled delivery returns to the queue. Merely
/// leaving a `for` loop early does neither: the consumer keeps running (up to `prefetch`
/// deliveries wait in its buffer) until you call ``cancel()``.
///
/// Thread rules: the settle calls may be made from any task; they return at once and are sent by
/// the connection thread, neighbouring acks coalesced into one `basic.ack(multiple: true)`.
public struct AMQPConsumer: AsyncSequence, Sendable {
    public typealias Element = AMQPDelivery

    /// The connection; kept alive as long as the consumer is referenced.
    public let connection: AMQPConnection
    public let queue: String
    /// The tag the broker knows the consumer by.
    public let consumerTag: String
    let id: UInt64
    let channelSession: UInt64
    private let stream: AsyncThrowingStream<[AMQPDelivery], any Error>

    init(
        connection: AMQPConnection,
        id: UInt64,
        queue: String,
        consumerTag: String,
        channelSession: UInt64,
        stream: AsyncThrowingStream<[AMQPDelivery], any Error>
    ) {
        self.connection = connection
        self.id = id
        self.queue = queue
        self.consumerTag = consumerTag
        self.channelSession = channelSession
        self.stream = stream
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[AMQPDelivery], any Error>.AsyncIterator
        /// The rest of the batch `next()` is handing out.
        var batch: [AMQPDelivery] = []
        var index = 0

        /// The next delivery, or nil when the consumer ended normally.
        /// - Throws: ``AMQPError`` when the connection, channel or consumer ended abnormally.
        public mutating func next() async throws -> AMQPDelivery? {
            if index == batch.count {
                guard let next = try await base.next() else { return nil }
                batch = next
                index = 0
            }
            defer { index += 1 }
            return batch[index]
        }

        /// Every delivery that has arrived and not been handed out yet (at least one; the
        /// order is the broker's), or nil when the consumer ended normally.
        /// - Throws: ``AMQPError`` as ``next()``.
        public mutating func nextBatch() async throws -> [AMQPDelivery]? {
            if index < batch.count {
                defer {
                    batch = []
                    index = 0
                }
                return index == 0 ? batch : Array(batch[index...])
            }
            return try await base.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator())
    }

    /// Acknowledges the delivery with this tag (and, with `multiple`, all earlier ones of this
    /// consumer). See ``AMQPConnection/ack(_:multiple:)``.
    /// - Throws: ``AMQPError`` when the connection is closed or lost.
    public func ack(_ deliveryTag: UInt64, multiple: Bool = false) throws(AMQPError) {
        try connection.settle(session: channelSession, tag: deliveryTag, multiple: multiple, kind: .ack)
    }

    /// Negatively acknowledges; with `requeue: false` the message is dead-lettered (if the queue
    /// has a dead-letter exchange) or dropped.
    /// - Throws: ``AMQPError`` when the connection is closed or lost.
    public func nack(_ deliveryTag: UInt64, multiple: Bool = false, requeue: Bool) throws(AMQPError) {
        try connection.settle(session: channelSession, tag: deliveryTag, multiple: multiple, kind: .nack(requeue: requeue))
    }

    /// Rejects one delivery; with `requeue: false` it is dead-lettered or dropped.
    /// - Throws: ``AMQPError`` when the connection is closed or lost.
    public func reject(_ deliveryTag: UInt64, requeue: Bool) throws(AMQPError) {
        try connection.settle(session: channelSession, tag: deliveryTag, multiple: false, kind: .reject(requeue: requeue))
    }

    /// Stops deliveries (`basic.cancel`) and returns once the broker confirmed. Deliveries already
    /// on their way are still handed out; then the sequence ends. Settlements keep working until
    /// every delivery is settled. Idempotent.
    /// - Throws: ``AMQPError`` when the connection is closed or lost (the consumer is gone then).
    public func cancel() async throws(AMQPError) {
        let id = self.id
        try await connection.perform { driver throws(AMQPError) in try driver.cancelConsumer(id: id, abrupt: false) }
    }

    /// Closes the consumer's channel without cancelling first, after sending the settlements
    /// made so far; returns once the broker confirmed. The sequence ends (what was received and
    /// not handed out is dropped) and every delivery not settled returns to the queue at its
    /// place. Why not ``cancel()`` then close: on a single-active-consumer queue `basic.cancel`
    /// hands the queue to the next consumer at once, which could then receive messages behind
    /// ours before ours are requeued; the broker handles a closed channel's requeue and its
    /// consumer's removal in one step. Idempotent.
    /// - Throws: ``AMQPError`` when the connection is closed or lost (the channel is gone then).
    public func close() async throws(AMQPError) {
        let id = self.id
        try await connection.perform { driver throws(AMQPError) in driver.closeConsumer(id: id) }
    }
}
