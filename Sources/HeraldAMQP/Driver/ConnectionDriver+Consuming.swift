internal import CRabbitMQ
import Logging

/// Consumers and settlements (ack, nack, reject), including ack coalescing.
extension ConnectionDriver {
    struct StartedConsumer: Sendable {
        let tag: String
        let channelSession: UInt64
    }

    /// Opens a channel, sets `basic.qos`, starts `basic.consume`.
    func startConsumer(
        id: UInt64,
        queue: String,
        prefetch: UInt16,
        tag: String,
        exclusive: Bool,
        arguments: AMQPTable,
        continuation: AsyncThrowingStream<[AMQPDelivery], any Error>.Continuation
    ) throws(AMQPError) -> StartedConsumer {
        try WireLimits.checkShortString(queue, "the queue name", call: "basic.consume")
        try WireLimits.checkShortString(tag, "the consumer tag", call: "basic.consume")
        try WireLimits.checkTable(arguments, "the arguments", call: "basic.consume")
        let channel = try openChannel(role: .opening)
        do {
            _ = try rpc("amqp_basic_qos", on: channel, subject: queue) {
                amqp_basic_qos($0, channel.number, 0, prefetch, 0)
            }
            let queueBytes = arena.bytes(queue)
            let tagBytes = arena.bytes(tag)
            let argumentTable = FieldTableCodec.encode(arguments, in: arena)
            let consumeOK = try rpc("amqp_basic_consume", on: channel, subject: queue) {
                amqp_basic_consume($0, channel.number, queueBytes, tagBytes, 0, 0, exclusive ? 1 : 0, argumentTable)
            }
            let consumerTag = FieldTableCodec.string(consumeOK.consumer_tag)
            let record = ConsumerRecord(id: id, queue: queue, tag: consumerTag, continuation: continuation)
            channel.role = .consumer(record)
            consumerChannels[id] = channel
            return StartedConsumer(tag: consumerTag, channelSession: channel.session)
        } catch {
            if !channel.isClosed, fatal == nil { closeChannel(channel) }
            channelDidClose(channel, error: nil)
            throw error
        }
    }

    /// Cancels a consumer. Graceful (`abrupt == false`): deliveries already sent still reach the
    /// stream, which then ends; the channel stays open until they are all settled. Abrupt (the
    /// application stopped iterating): the stream ends now and the channel closes, so the broker
    /// requeues every unacknowledged delivery of this consumer.
    func cancelConsumer(id: UInt64, abrupt: Bool) throws(AMQPError) {
        guard let channel = consumerChannels[id], let record = channel.consumer else { return }
        if record.phase == .active {
            let tagBytes = arena.bytes(record.tag)
            _ = try rpc("amqp_basic_cancel", on: channel, subject: record.queue) {
                amqp_basic_cancel($0, channel.number, tagBytes)
            }
            record.startDraining()
        }
        if abrupt {
            record.finish(throwing: nil)
            closeChannel(channel)
        }
    }

    /// Ends the streams of cancelled consumers once everything buffered has been read, and closes
    /// their channels when nothing is left to settle.
    func finishDrainedConsumers() {
        for channel in Array(consumerChannels.values) {
            guard let record = channel.consumer else { continue }
            if record.phase == .draining { record.finish(throwing: nil) }
            if record.phase == .finished, channel.ledger.isEmpty, channel.pendingAcks.isEmpty {
                closeChannel(channel)
                if fatal != nil { return }
            }
        }
    }

    // MARK: Settlements

    func settle(_ settlement: ConnectionCommand.Settlement) {
        guard let channel = channelsBySession[settlement.session], !channel.isClosed else {
            logger.debug(
                "AMQP settlement dropped: its channel is closed and the broker requeued the delivery",
                metadata: ["amqp.delivery_tag": "\(settlement.deliveryTag)"]
            )
            return
        }
        if case .ack = settlement.kind, !settlement.multiple {
            guard channel.ledger.contains(settlement.deliveryTag) else {
                warnUnknownTag(settlement, on: channel)
                return
            }
            channel.pendingAcks.append(settlement.deliveryTag)
            return
        }
        // Anything else keeps its place in order: send the gathered acks first.
        flush(channel)
        guard fatal == nil, !channel.isClosed, let connection else { return }
        let tag = settlement.deliveryTag
        guard channel.ledger.contains(tag) else {
            warnUnknownTag(settlement, on: channel)
            return
        }
        let status: Int32
        let call: String
        switch settlement.kind {
        case .ack:
            status = amqp_basic_ack(connection, channel.number, tag, 1)
            call = "amqp_basic_ack"
        case .nack(let requeue):
            status = amqp_basic_nack(connection, channel.number, tag, settlement.multiple ? 1 : 0, requeue ? 1 : 0)
            call = "amqp_basic_nack"
        case .reject(let requeue):
            status = amqp_basic_reject(connection, channel.number, tag, requeue ? 1 : 0)
            call = "amqp_basic_reject"
        }
        if status < 0 {
            markFatal(RabbitCall.statusError(status, call: call))
            return
        }
        if settlement.multiple { channel.ledger.settle(through: tag) } else { channel.ledger.settle(tag) }
        closeIfSettled(channel)
    }

    /// Sends the acks gathered on every channel during this turn.
    func flushSettlements() {
        for channel in channelsBySession.values where !channel.pendingAcks.isEmpty {
            flush(channel)
            if fatal != nil { return }
            closeIfSettled(channel)
            if fatal != nil { return }
        }
    }

    /// Coalesces a channel's gathered acks: the run covering the oldest outstanding deliveries goes
    /// as one `basic.ack(multiple: true)`, the rest one by one.
    private func flush(_ channel: ChannelState) {
        guard !channel.pendingAcks.isEmpty, let connection else { return }
        var acks = Set(channel.pendingAcks)
        channel.pendingAcks.removeAll(keepingCapacity: true)
        if let prefix = channel.ledger.takeAckPrefix(from: &acks) {
            let status = amqp_basic_ack(connection, channel.number, prefix.last, prefix.count > 1 ? 1 : 0)
            if status < 0 {
                markFatal(RabbitCall.statusError(status, call: "amqp_basic_ack"))
                return
            }
        }
        for tag in acks.sorted() where channel.ledger.settle(tag) {
            let status = amqp_basic_ack(connection, channel.number, tag, 0)
            if status < 0 {
                markFatal(RabbitCall.statusError(status, call: "amqp_basic_ack"))
                return
            }
        }
    }

    private func closeIfSettled(_ channel: ChannelState) {
        guard let record = channel.consumer, record.phase == .finished, channel.ledger.isEmpty,
            channel.pendingAcks.isEmpty
        else { return }
        closeChannel(channel)
    }

    private func warnUnknownTag(_ settlement: ConnectionCommand.Settlement, on channel: ChannelState) {
        // Sending it would make the broker close the channel (406 unknown delivery tag).
        logger.warning(
            "AMQP settlement for a delivery tag that is not outstanding was not sent (settled twice?)",
            metadata: ["amqp.delivery_tag": "\(settlement.deliveryTag)", "amqp.channel": "\(channel.number)"]
        )
    }
}
