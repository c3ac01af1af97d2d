internal import CRabbitMQ
import DequeModule
import Foundation

/// Publishing with confirms: the outbox, the window, and the confirm-mode channel.
extension ConnectionDriver {
    /// Publishes from the outbox while fewer than `publishWindow` confirms are outstanding.
    /// Returns how many messages went out.
    func pumpPublishes(budget: Int) -> Int {
        guard !outbox.isEmpty, !blocked else { return 0 }
        let window = max(1, configuration.publishWindow)
        guard confirms.outstanding < window else { return 0 }
        let channel: ChannelState
        do {
            channel = try publishingChannel()
        } catch {
            if fatal == nil {
                // The broker refused the channel or confirm mode: nothing queued can go out.
                let failed = outbox
                outbox.removeAll()
                for item in failed { item.sink.complete(error) }
            }
            return 0
        }
        guard let connection else { return 0 }
        var run = CorkedWrites(socket: amqp_get_sockfd(connection))
        defer { run.end() }
        var sent = 0
        while sent < budget, confirms.outstanding < window, let item = outbox.popFirst() {
            do throws(AMQPError) {
                try WireLimits.check(item.message, frameMax: frameMax)
            } catch {
                item.sink.complete(error)
                continue
            }
            run.willWrite()
            let status = publish(item.message, on: channel.number, connection: connection)
            arena.reset()
            if status < 0 {
                let error = RabbitCall.statusError(status, call: "amqp_basic_publish", subject: "exchange '\(item.message.exchange)'")
                item.sink.complete(error)
                markFatal(error)
                return sent
            }
            confirms.register(item.sink, message: item.message)
            sent += 1
        }
        return sent
    }

    private func publish(_ message: AMQPOutgoingMessage, on channel: UInt16, connection: OpaquePointer) -> Int32 {
        var properties = PropertiesCodec.encode(message.properties, in: arena)
        let exchange = arena.bytes(message.exchange)
        let routingKey = arena.bytes(message.routingKey)
        return message.body.withUnsafeBytes { raw in
            let body = amqp_bytes_t(len: raw.count, bytes: raw.count == 0 ? nil : UnsafeMutableRawPointer(mutating: raw.baseAddress))
            return amqp_basic_publish(
                connection,
                channel,
                exchange,
                routingKey,
                message.mandatory ? 1 : 0,
                0,
                &properties,
                body
            )
        }
    }

    /// The confirm-mode channel, opened on first use and after the broker closed it.
    private func publishingChannel() throws(AMQPError) -> ChannelState {
        if let publisher, !publisher.isClosed { return publisher }
        let channel = try openChannel(role: .publisher)
        _ = try rpc("amqp_confirm_select", on: channel) { amqp_confirm_select($0, channel.number) }
        publisher = channel
        return channel
    }
}
