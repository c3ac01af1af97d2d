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

    /// Closes a consumer's channel without `basic.cancel` (the settlements gathered or held went
    /// out before this operation ran): the stream ends and the broker requeues the rest.
    func closeConsumer(id: UInt64) {
        guard let channel = consumerChannels[id], let record = channel.consumer else { return }
        record.finish(throwing: nil)
        closeChannel(channel)
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
        // Anything else keeps its place in order: send the gathered and held acks first (a
        // multiple nack must not reach a held ack).
        flush(channel, force: true)
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

    /// Sends the acks gathered on every channel during this turn; with `force`, and for a
    /// consumer no longer active, the held ones too.
    func flushSettlements(force: Bool = false) {
        for channel in channelsBySession.values where !channel.pendingAcks.isEmpty || !channel.heldAcks.isEmpty {
            flush(channel, force: force || channel.consumer?.phase != .active)
            if fatal != nil { return }
            closeIfSettled(channel)
            if fatal != nil { return }
        }
    }

    /// Coalesces a channel's gathered acks: the run covering the oldest outstanding deliveries goes
    /// as one `basic.ack(multiple: true)`. The rest wait for the run that will cover them (a
    /// delivery settled ahead of an older one is common: users' lanes finish in their own order;
    /// one by one they were a third of the pipeline's acks): while the oldest outstanding
    /// delivery is young (``youngFrontHoldTime``), else up to ``ackHoldTime`` and
    /// ``ackHoldCount``; then they go one by one. `force` sends them at once.
    private func flush(_ channel: ChannelState, force: Bool = false) {
        guard !channel.pendingAcks.isEmpty || !channel.heldAcks.isEmpty, let connection else { return }
        var acks = channel.heldAcks
        acks.formUnion(channel.pendingAcks)
        channel.pendingAcks.removeAll(keepingCapacity: true)
        channel.heldAcks.removeAll(keepingCapacity: true)
        var run = CorkedWrites(socket: amqp_get_sockfd(connection))
        defer { run.end() }
        if let prefix = channel.ledger.takeAckPrefix(from: &acks) {
            run.willWrite()
            let status = amqp_basic_ack(connection, channel.number, prefix.last, prefix.count > 1 ? 1 : 0)
            if status < 0 {
                markFatal(RabbitCall.statusError(status, call: "amqp_basic_ack"))
                return
            }
        }
        guard !acks.isEmpty else {
            channel.heldSince = nil
            return
        }
        let now = ContinuousClock.now
        let frontIsYoung =
            channel.ledger.frontSince.map { now - $0 < Self.youngFrontHoldTime } ?? false
            && channel.ledger.oldestArrival.map { now - $0 < Self.youngFrontAge } ?? false
        let heldBriefly = acks.count <= Self.ackHoldCount && now - (channel.heldSince ?? now) < Self.ackHoldTime
        if !force, frontIsYoung || heldBriefly {
            channel.heldAcks = acks
            if channel.heldSince == nil { channel.heldSince = now }
            return
        }
        channel.heldSince = nil
        for tag in acks.sorted() where channel.ledger.settle(tag) {
            run.willWrite()
            let status = amqp_basic_ack(connection, channel.number, tag, 0)
            if status < 0 {
                markFatal(RabbitCall.statusError(status, call: "amqp_basic_ack"))
                return
            }
        }
    }

    /// How long, and how many, acks wait for the multiple ack that would cover them. Short: a
    /// held ack keeps its delivery in the prefetch window, and is lost with the connection (the
    /// broker delivers the message again; its recorded deliveries are skipped).
    static let ackHoldTime: Duration = .milliseconds(20)
    static let ackHoldCount = 256

    /// While the oldest outstanding delivery has been the oldest for less than this, and arrived
    /// less than ``youngFrontAge`` ago, acks wait for it however many there are (the prefetch
    /// window bounds them). Why: a single ack costs RabbitMQ a walk over every older outstanding
    /// delivery of the channel (`rabbit_channel:collect_acks`), and with real providers
    /// broadcasts to busy users stay outstanding for their users' earlier pushes, a round trip
    /// each, and settle one after another. Sent one by one behind them, the acks cost RabbitMQ
    /// several times what held ones do (docs/performance.md, "Acks wait for a young front").
    /// A front that stays (a delivery waiting for its retry) stalls the window at most this
    /// long, and an old one (retries wait a second or more) not at all.
    static let youngFrontHoldTime: Duration = .milliseconds(150)
    static let youngFrontAge: Duration = .seconds(1)

    /// Whether some channel holds acks back: the loop then waits for activity only briefly.
    var holdsAcks: Bool {
        consumerChannels.values.contains { !$0.heldAcks.isEmpty }
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
