internal import CRabbitMQ
import Foundation
import Glibc
import Logging

/// Reading and dispatching the frames the broker sends without being asked.
extension ConnectionDriver {
    /// Reads up to `budget` frames without blocking; returns how many were read. The deliveries
    /// read go to their consumers' streams at the end, one batch per consumer.
    ///
    /// The socket is read once a turn: once librabbitmq has no more bytes or frames of that read,
    /// the turn ends and the loop waits in `poll`, which returns at once if more arrived. (Reading
    /// on to the empty socket cost a `recv` and a `poll` a turn.)
    func readFrames(budget: Int) -> Int {
        defer {
            for record in consumersWithDeliveries { record.flush() }
            consumersWithDeliveries.removeAll(keepingCapacity: true)
        }
        guard let connection else { return 0 }
        // A 1 µs timeout rather than zero: with a zero deadline librabbitmq never checks the
        // receive-heartbeat deadline, so a silent peer would go unnoticed.
        var timeout = Glibc.timeval(tv_sec: 0, tv_usec: 1)
        var frame = amqp_frame_t()
        for count in 0..<budget {
            let status = amqp_simple_wait_frame_noblock(connection, &frame, &timeout)
            if status == AMQP_STATUS_TIMEOUT.rawValue { return count }
            if status != AMQP_STATUS_OK.rawValue {
                markFatal(RabbitCall.statusError(status, call: "amqp_simple_wait_frame_noblock"))
                return count
            }
            dispatch(frame)
            if fatal != nil || self.connection == nil { return count + 1 }
            if amqp_data_in_buffer(connection) == 0, amqp_frames_enqueued(connection) == 0 { return count + 1 }
        }
        return budget
    }

    private func dispatch(_ frame: amqp_frame_t) {
        guard frame.frame_type == UInt8(AMQP_FRAME_METHOD) else {
            // Content frames only arrive here for channels already forgotten: skip them.
            return
        }
        let method = frame.payload.method
        if frame.channel == 0 {
            dispatchConnectionMethod(method)
            return
        }
        guard let channel = channelsByNumber[frame.channel] else {
            if method.id == AMQP_CHANNEL_CLOSE_METHOD { acknowledgeChannelClose(frame.channel) }
            return
        }
        switch method.id {
        case AMQP_BASIC_DELIVER_METHOD:
            let deliver = method.decoded.assumingMemoryBound(to: amqp_basic_deliver_t.self).pointee
            handleDeliver(deliver, on: channel)
        case AMQP_BASIC_ACK_METHOD:
            let ack = method.decoded.assumingMemoryBound(to: amqp_basic_ack_t.self).pointee
            if case .publisher = channel.role { confirms.confirm(ack.delivery_tag, multiple: ack.multiple != 0, nack: nil) }
        case AMQP_BASIC_NACK_METHOD:
            let nack = method.decoded.assumingMemoryBound(to: amqp_basic_nack_t.self).pointee
            if case .publisher = channel.role {
                let error = AMQPError(
                    code: .publishNacked,
                    call: "basic.publish",
                    message: "the broker nacked the message (basic.nack): it did not take responsibility for it"
                )
                confirms.confirm(nack.delivery_tag, multiple: nack.multiple != 0, nack: error)
            }
        case AMQP_BASIC_RETURN_METHOD:
            let returned = method.decoded.assumingMemoryBound(to: amqp_basic_return_t.self).pointee
            handleReturn(returned, on: channel)
        case AMQP_BASIC_CANCEL_METHOD:
            handleBrokerCancel(on: channel)
        case AMQP_CHANNEL_CLOSE_METHOD:
            if case .channelClosed(let error)? = RabbitCall.serverMethod(method, call: "channel.close") {
                acknowledgeChannelClose(channel.number)
                channelDidClose(channel, error: error)
            }
        case AMQP_CHANNEL_FLOW_METHOD:
            // RabbitMQ no longer sends channel.flow; answer it anyway so the channel stays valid.
            var flowOK = amqp_channel_flow_ok_t(active: method.decoded.assumingMemoryBound(to: amqp_channel_flow_t.self).pointee.active)
            if let connection { _ = amqp_send_method(connection, channel.number, AMQP_CHANNEL_FLOW_OK_METHOD, &flowOK) }
        default:
            break
        }
    }

    private func dispatchConnectionMethod(_ method: amqp_method_t) {
        switch method.id {
        case AMQP_CONNECTION_CLOSE_METHOD:
            if case .connectionClosed(let error)? = RabbitCall.serverMethod(method, call: "connection.close") {
                acknowledgeConnectionClose()
                markFatal(error)
            }
        case AMQP_CONNECTION_BLOCKED_METHOD:
            let reason = FieldTableCodec.string(
                method.decoded.assumingMemoryBound(to: amqp_connection_blocked_t.self).pointee.reason
            )
            blocked = true
            logger.warning("AMQP broker blocked publishing", metadata: ["reason": "\(reason)"])
        case AMQP_CONNECTION_UNBLOCKED_METHOD:
            blocked = false
            logger.info("AMQP broker unblocked publishing")
        default:
            break
        }
    }

    /// Reads the header and body frames that follow a deliver, return or get-ok on `channel`.
    /// Returns nil (after handling the failure) when the channel or connection closed instead.
    func readContent(on channel: ChannelState, call: String) -> (body: Data, properties: AMQPProperties)? {
        guard let connection else { return nil }
        var message = amqp_message_t()
        let reply = amqp_read_message(connection, channel.number, &message, 0)
        switch RabbitCall.classify(reply, call: call) {
        case .ok:
            let body = FieldTableCodec.data(message.body)
            let properties = PropertiesCodec.decode(message.properties)
            amqp_destroy_message(&message)
            return (body, properties)
        case let outcome:
            _ = fail(outcome, channel: channel)
            return nil
        }
    }

    private func handleDeliver(_ deliver: amqp_basic_deliver_t, on channel: ChannelState) {
        let exchange = FieldTableCodec.string(deliver.exchange, reusing: channel.lastExchange)
        let routingKey = FieldTableCodec.string(deliver.routing_key, reusing: channel.lastRoutingKey)
        channel.lastExchange = exchange
        channel.lastRoutingKey = routingKey
        guard let content = readContent(on: channel, call: "amqp_read_message(basic.deliver)") else { return }
        // A delivery for a consumer that is no longer listening stays unacknowledged; the broker
        // requeues it when the channel closes.
        guard let record = channel.consumer, FieldTableCodec.equals(deliver.consumer_tag, record.tag), record.acceptsDeliveries else { return }
        let consumerTag = record.tag
        channel.ledger.record(deliver.delivery_tag)
        let first = record.buffer(
            AMQPDelivery(
                .init(
                    body: content.body,
                    exchange: exchange,
                    routingKey: routingKey,
                    deliveryTag: deliver.delivery_tag,
                    redelivered: deliver.redelivered != 0,
                    properties: content.properties,
                    consumerTag: consumerTag,
                    messageCount: nil,
                    channelSession: channel.session
                ))
        )
        if first { consumersWithDeliveries.append(record) }
    }

    private func handleReturn(_ returned: amqp_basic_return_t, on channel: ChannelState) {
        let exchange = FieldTableCodec.string(returned.exchange)
        let routingKey = FieldTableCodec.string(returned.routing_key)
        let error = AMQPError(
            code: .unroutable,
            call: "basic.publish",
            message: FieldTableCodec.string(returned.reply_text),
            replyCode: returned.reply_code,
            subject: "exchange '\(exchange)', routing key '\(routingKey)'"
        )
        guard let content = readContent(on: channel, call: "amqp_read_message(basic.return)") else { return }
        guard case .publisher = channel.role else { return }
        if !confirms.markReturned(exchange: exchange, routingKey: routingKey, body: content.body, error: error) {
            logger.warning("AMQP basic.return matched no pending publish", metadata: ["error": "\(error)"])
        }
    }

    private func handleBrokerCancel(on channel: ChannelState) {
        guard let record = channel.consumer else { return }
        let error = AMQPError(
            code: .consumerCancelled,
            call: "basic.cancel",
            message: "the broker cancelled the consumer (queue deleted or failed over)",
            subject: record.queue
        )
        logger.warning("AMQP consumer cancelled by the broker", metadata: ["amqp.queue": "\(record.queue)"])
        record.finish(throwing: error)
        closeChannel(channel)
    }
}
