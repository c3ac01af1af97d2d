internal import CRabbitMQ
import Logging

/// Channels: numbering, opening, closing, and the synchronous-call funnel that turns a broker's
/// `channel.close` / `connection.close` into the right clean-up.
extension ConnectionDriver {
    /// The live connection, or the error that ended it.
    func liveConnection() throws(AMQPError) -> OpaquePointer {
        if let fatal { throw fatal }
        guard let connection else {
            throw AMQPError(code: .connectionClosed, call: "connection", message: "the connection is closed")
        }
        return connection
    }

    /// Runs a librabbitmq framing call (which returns the reply struct or NULL) on `channel`.
    /// The returned struct's byte fields point into librabbitmq's pools: copy them before the next
    /// `amqp_maybe_release_buffers`.
    func rpc<Reply>(
        _ call: String,
        on channel: ChannelState,
        subject: String? = nil,
        _ body: (OpaquePointer) -> UnsafeMutablePointer<Reply>?
    ) throws(AMQPError) -> Reply {
        let connection = try liveConnection()
        if let reply = body(connection) { return reply.pointee }
        throw fail(RabbitCall.classify(amqp_get_rpc_reply(connection), call: call, subject: subject), channel: channel)
    }

    /// Acts on a failed reply and returns the error to report: answers a broker close with
    /// `close-ok`, forgets a closed channel, marks the connection dead on library failures.
    func fail(_ outcome: RabbitReply, channel: ChannelState?) -> AMQPError {
        switch outcome {
        case .ok:
            let error = AMQPError(code: .protocolError, call: "rpc", message: "empty reply to a synchronous method")
            markFatal(error)
            return error
        case .library(let error):
            markFatal(error)
            return error
        case .connectionClosed(let error):
            acknowledgeConnectionClose()
            markFatal(error)
            return error
        case .channelClosed(let error):
            if let channel {
                acknowledgeChannelClose(channel.number)
                channelDidClose(channel, error: error)
            }
            return error
        }
    }

    /// Sends `channel.close-ok` for a close the broker initiated.
    func acknowledgeChannelClose(_ number: UInt16) {
        guard let connection else { return }
        var closeOK = amqp_channel_close_ok_t()
        let status = amqp_send_method(connection, number, AMQP_CHANNEL_CLOSE_OK_METHOD, &closeOK)
        if status < 0 { markFatal(RabbitCall.statusError(status, call: "amqp_send_method(channel.close-ok)")) }
    }

    /// Sends `connection.close-ok` for a close the broker initiated.
    func acknowledgeConnectionClose() {
        guard let connection else { return }
        var closeOK = amqp_connection_close_ok_t()
        _ = amqp_send_method(connection, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &closeOK)
    }

    /// Opens a new channel. Channel numbers are handed out round-robin so that frames still queued
    /// for a just-closed channel can never be mistaken for a new channel's.
    func openChannel(role: ChannelState.Role) throws(AMQPError) -> ChannelState {
        _ = try liveConnection()
        guard let number = allocateChannelNumber() else {
            throw AMQPError(
                code: .invalidArgument,
                call: "amqp_channel_open",
                message: "all \(channelMax) channels of the connection are in use"
            )
        }
        let channel = ChannelState(number: number, session: nextSession, role: role)
        nextSession += 1
        channelsByNumber[number] = channel
        channelsBySession[channel.session] = channel
        _ = try rpc("amqp_channel_open", on: channel) { amqp_channel_open($0, number) }
        return channel
    }

    private func allocateChannelNumber() -> UInt16? {
        let limit = Int(channelMax)
        for _ in 0..<limit {
            let candidate = nextChannelNumber
            nextChannelNumber = candidate >= channelMax ? 1 : candidate + 1
            if channelsByNumber[candidate] == nil { return candidate }
        }
        return nil
    }

    /// Closes a channel from our side (`channel.close`, waits for `close-ok`).
    func closeChannel(_ channel: ChannelState) {
        guard !channel.isClosed, let connection else { return }
        let reply = amqp_channel_close(connection, channel.number, AMQP_REPLY_SUCCESS)
        switch RabbitCall.classify(reply, call: "amqp_channel_close") {
        case .ok:
            channelDidClose(channel, error: nil)
        case let outcome:
            _ = fail(outcome, channel: channel)
        }
    }

    /// Forgets a closed channel and settles what depended on it.
    func channelDidClose(_ channel: ChannelState, error: AMQPError?) {
        guard !channel.isClosed else { return }
        channel.isClosed = true
        channel.ledger.removeAll()
        channel.pendingAcks.removeAll()
        channel.heldAcks.removeAll()
        channel.heldSince = nil
        if channelsByNumber[channel.number] === channel { channelsByNumber[channel.number] = nil }
        channelsBySession[channel.session] = nil
        switch channel.role {
        case .control:
            if control === channel { control = nil }
        case .publisher:
            if publisher === channel { publisher = nil }
            if let error {
                logger.warning("AMQP publishing channel closed by the broker", metadata: ["error": "\(error)"])
            }
            confirms.failAll(
                error
                    ?? AMQPError(
                        code: .channelClosed,
                        call: "basic.publish",
                        message: "the publishing channel closed before the broker confirmed"
                    )
            )
        case .consumer(let record):
            consumerChannels[record.id] = nil
            record.finish(throwing: error)
            if let error {
                logger.warning(
                    "AMQP consumer channel closed by the broker",
                    metadata: ["amqp.queue": "\(record.queue)", "error": "\(error)"]
                )
            }
        case .opening:
            break
        }
    }

    /// The channel for synchronous operations, reopened after the broker closed it.
    func controlChannel() throws(AMQPError) -> ChannelState {
        if let control, !control.isClosed { return control }
        let channel = try openChannel(role: .control)
        control = channel
        return channel
    }
}
