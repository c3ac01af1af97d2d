import Logging

/// Consuming, pulling and settling messages.
extension AMQPConnection {
    /// Starts a consumer with manual acknowledgements on its own channel.
    ///
    /// At most `prefetch` deliveries are unacknowledged at once (`basic.qos`), which also bounds
    /// the consumer's buffer: the broker sends nothing more until you settle. Settle each delivery
    /// with ``AMQPConsumer/ack(_:multiple:)`` (or nack/reject).
    ///
    /// - Parameters:
    ///   - queue: The queue to consume from.
    ///   - prefetch: 1…65535 unacknowledged deliveries.
    ///   - consumerTag: Empty for a broker-generated tag.
    ///   - exclusive: Refuse other consumers on the queue.
    ///   - arguments: Consumer arguments (e.g. `x-priority`).
    /// - Throws: ``AMQPError`` (``AMQPError/Code/notFound`` for a missing queue,
    ///   ``AMQPError/Code/resourceLocked`` for an exclusive conflict, ``AMQPError/Code/invalidArgument``
    ///   for prefetch 0, or a connection-level code).
    public func consume(
        queue: String,
        prefetch: UInt16 = 100,
        consumerTag: String = "",
        exclusive: Bool = false,
        arguments: AMQPTable = [:]
    ) async throws(AMQPError) -> AMQPConsumer {
        guard prefetch > 0 else {
            throw AMQPError(
                code: .invalidArgument,
                call: "consume",
                message: "prefetch must be at least 1 (0 would let the broker send without bound)",
                subject: queue
            )
        }
        let id = core.makeConsumerID()
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [AMQPDelivery].self, throwing: (any Error).self)
        let core = self.core
        continuation.onTermination = { termination in
            // The application stopped iterating (task cancelled or sequence dropped): cancel the
            // consumer and close its channel so its unacknowledged deliveries are requeued.
            guard case .cancelled = termination else { return }
            try? core.submit(
                .operation(
                    run: { driver in
                        do throws(AMQPError) {
                            try driver.cancelConsumer(id: id, abrupt: true)
                        } catch {
                            driver.logger.debug("AMQP consumer cancel failed", metadata: ["error": "\(error)"])
                        }
                    },
                    fail: { _ in }
                )
            )
        }
        do throws(AMQPError) {
            let started = try await perform { driver throws(AMQPError) in
                try driver.startConsumer(
                    id: id,
                    queue: queue,
                    prefetch: prefetch,
                    tag: consumerTag,
                    exclusive: exclusive,
                    arguments: arguments,
                    continuation: continuation
                )
            }
            return AMQPConsumer(
                connection: self,
                id: id,
                queue: queue,
                consumerTag: started.tag,
                channelSession: started.channelSession,
                stream: stream
            )
        } catch {
            continuation.finish(throwing: error)
            throw error
        }
    }

    /// Pulls one message (`basic.get`), or returns nil when the queue is empty. For inspection
    /// tools (`herald dlq list`, replay). Unless `autoAck`, settle the delivery with
    /// ``ack(_:multiple:)``, ``nack(_:multiple:requeue:)`` or ``reject(_:requeue:)``; unsettled
    /// pulled messages return to the queue when the connection closes.
    /// - Throws: ``AMQPError`` (``AMQPError/Code/notFound`` for a missing queue, or a
    ///   connection-level code).
    public func get(queue: String, autoAck: Bool = false) async throws(AMQPError) -> AMQPDelivery? {
        try await perform { driver throws(AMQPError) in try driver.get(queue: queue, autoAck: autoAck) }
    }

    /// Acknowledges a delivery (with `multiple`, every earlier unsettled delivery of its channel
    /// too). Returns at once: the connection thread sends it, coalescing neighbouring acks into
    /// one `basic.ack(multiple: true)`. A settlement whose channel has closed meanwhile is dropped
    /// (the broker already requeued the message), as is a second settlement of the same delivery
    /// (sending it would make the broker close the channel).
    /// - Throws: ``AMQPError`` when the connection is closed or lost; the broker then redelivers
    ///   the message (at-least-once).
    public func ack(_ delivery: AMQPDelivery, multiple: Bool = false) throws(AMQPError) {
        try settle(session: delivery.channelSession, tag: delivery.deliveryTag, multiple: multiple, kind: .ack)
    }

    /// Acknowledges each of these deliveries, as ``ack(_:multiple:)`` does one, in one command to
    /// the connection thread: one lock and at most one wake. (Acknowledged one call at a time, a
    /// batch woke the thread again for every few messages while it was being handed over.)
    /// - Throws: ``AMQPError`` when the connection is closed or lost.
    public func ack(_ deliveries: some Collection<AMQPDelivery>) throws(AMQPError) {
        guard !deliveries.isEmpty else { return }
        var settlements: [ConnectionCommand.Settlement] = []
        settlements.reserveCapacity(deliveries.count)
        for delivery in deliveries {
            settlements.append(.init(session: delivery.channelSession, deliveryTag: delivery.deliveryTag, multiple: false, kind: .ack))
        }
        try core.submit(.settleBatch(settlements))
    }

    /// Negatively acknowledges a delivery: requeued, or (with `requeue: false`) dropped or
    /// dead-lettered if its queue has a dead-letter exchange.
    /// - Throws: ``AMQPError`` when the connection is closed or lost.
    public func nack(_ delivery: AMQPDelivery, multiple: Bool = false, requeue: Bool) throws(AMQPError) {
        try settle(session: delivery.channelSession, tag: delivery.deliveryTag, multiple: multiple, kind: .nack(requeue: requeue))
    }

    /// Rejects one delivery; like ``nack(_:multiple:requeue:)`` without `multiple`.
    /// - Throws: ``AMQPError`` when the connection is closed or lost.
    public func reject(_ delivery: AMQPDelivery, requeue: Bool) throws(AMQPError) {
        try settle(session: delivery.channelSession, tag: delivery.deliveryTag, multiple: false, kind: .reject(requeue: requeue))
    }

    func settle(
        session: UInt64,
        tag: UInt64,
        multiple: Bool,
        kind: ConnectionCommand.Settlement.Kind
    ) throws(AMQPError) {
        try core.submit(.settle(.init(session: session, deliveryTag: tag, multiple: multiple, kind: kind)))
    }
}
