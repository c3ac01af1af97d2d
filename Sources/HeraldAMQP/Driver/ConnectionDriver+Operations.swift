internal import CRabbitMQ
import Logging

/// Synchronous operations on the control channel: topology, queue utilities, `basic.get`.
extension ConnectionDriver {
    func declareExchange(_ exchange: AMQPExchange, passive: Bool = false) throws(AMQPError) -> AMQPTopologyWarning? {
        try WireLimits.checkShortString(exchange.name, "the exchange name", call: "exchange.declare")
        try WireLimits.checkShortString(exchange.type.rawValue, "the exchange type", call: "exchange.declare")
        try WireLimits.checkTable(exchange.arguments, "the arguments", call: "exchange.declare")
        let channel = try controlChannel()
        let name = arena.bytes(exchange.name)
        let type = arena.bytes(exchange.type.rawValue)
        let arguments = FieldTableCodec.encode(exchange.arguments, in: arena)
        do {
            _ = try rpc("amqp_exchange_declare", on: channel, subject: "exchange '\(exchange.name)'") {
                amqp_exchange_declare(
                    $0,
                    channel.number,
                    name,
                    type,
                    passive ? 1 : 0,
                    exchange.durable ? 1 : 0,
                    exchange.autoDelete ? 1 : 0,
                    exchange.internal ? 1 : 0,
                    arguments
                )
            }
            return nil
        } catch  where error.code == .preconditionFailed && !passive {
            // It exists with other settings; the broker closed the control channel. Use it as is.
            _ = try declareExchange(exchange, passive: true)
            return AMQPTopologyWarning(kind: .exchange, name: exchange.name, brokerMessage: error.message)
        }
    }

    func declareQueue(_ queue: AMQPQueue) throws(AMQPError) -> AMQPQueueState {
        do {
            return try queueDeclare(queue, passive: false)
        } catch  where error.code == .preconditionFailed {
            // It exists with other arguments (406 closed the control channel): fall back to a
            // passive declare on a fresh channel and report it.
            var state = try queueDeclare(queue, passive: true)
            state.warning = AMQPTopologyWarning(kind: .queue, name: queue.name, brokerMessage: error.message)
            logger.warning(
                "AMQP queue exists with other arguments; using it as it is",
                metadata: ["amqp.queue": "\(queue.name)", "broker": "\(error.message)"]
            )
            return state
        }
    }

    /// `queue.declare`; passive only checks that the queue exists and reads its counts.
    func queueDeclare(_ queue: AMQPQueue, passive: Bool) throws(AMQPError) -> AMQPQueueState {
        try WireLimits.checkShortString(queue.name, "the queue name", call: "queue.declare")
        try WireLimits.checkTable(queue.declarationArguments, "the arguments", call: "queue.declare")
        let channel = try controlChannel()
        let name = arena.bytes(queue.name)
        let arguments = passive ? amqp_table_t(num_entries: 0, entries: nil) : FieldTableCodec.encode(queue.declarationArguments, in: arena)
        let declareOK = try rpc("amqp_queue_declare", on: channel, subject: "queue '\(queue.name)'") {
            amqp_queue_declare(
                $0,
                channel.number,
                name,
                passive ? 1 : 0,
                queue.durable ? 1 : 0,
                queue.exclusive ? 1 : 0,
                queue.autoDelete ? 1 : 0,
                arguments
            )
        }
        return AMQPQueueState(
            name: FieldTableCodec.string(declareOK.queue),
            messageCount: declareOK.message_count,
            consumerCount: declareOK.consumer_count
        )
    }

    func bindQueue(_ binding: AMQPBinding) throws(AMQPError) {
        try changeBinding(binding, bind: true)
    }

    func unbindQueue(_ binding: AMQPBinding) throws(AMQPError) {
        try changeBinding(binding, bind: false)
    }

    /// `queue.bind` or `queue.unbind`: the same checks and arguments, one method apart.
    private func changeBinding(_ binding: AMQPBinding, bind: Bool) throws(AMQPError) {
        try Self.check(binding, call: bind ? "queue.bind" : "queue.unbind")
        let channel = try controlChannel()
        let queue = arena.bytes(binding.queue)
        let exchange = arena.bytes(binding.exchange)
        let routingKey = arena.bytes(binding.routingKey)
        let arguments = FieldTableCodec.encode(binding.arguments, in: arena)
        let subject = "queue '\(binding.queue)' \(bind ? "to" : "from") '\(binding.exchange)'"
        if bind {
            _ = try rpc("amqp_queue_bind", on: channel, subject: subject) { amqp_queue_bind($0, channel.number, queue, exchange, routingKey, arguments) }
        } else {
            _ = try rpc("amqp_queue_unbind", on: channel, subject: subject) { amqp_queue_unbind($0, channel.number, queue, exchange, routingKey, arguments) }
        }
    }

    func purgeQueue(_ name: String) throws(AMQPError) -> UInt32 {
        try WireLimits.checkShortString(name, "the queue name", call: "queue.purge")
        let channel = try controlChannel()
        let queue = arena.bytes(name)
        let purgeOK = try rpc("amqp_queue_purge", on: channel, subject: "queue '\(name)'") {
            amqp_queue_purge($0, channel.number, queue)
        }
        return purgeOK.message_count
    }

    func deleteQueue(_ name: String, ifUnused: Bool, ifEmpty: Bool) throws(AMQPError) -> UInt32 {
        try WireLimits.checkShortString(name, "the queue name", call: "queue.delete")
        let channel = try controlChannel()
        let queue = arena.bytes(name)
        let deleteOK = try rpc("amqp_queue_delete", on: channel, subject: "queue '\(name)'") {
            amqp_queue_delete($0, channel.number, queue, ifUnused ? 1 : 0, ifEmpty ? 1 : 0)
        }
        return deleteOK.message_count
    }

    func deleteExchange(_ name: String, ifUnused: Bool) throws(AMQPError) {
        try WireLimits.checkShortString(name, "the exchange name", call: "exchange.delete")
        let channel = try controlChannel()
        let exchange = arena.bytes(name)
        _ = try rpc("amqp_exchange_delete", on: channel, subject: "exchange '\(name)'") {
            amqp_exchange_delete($0, channel.number, exchange, ifUnused ? 1 : 0)
        }
    }

    /// `basic.get`: one message or nil when the queue is empty. Unless `autoAck`, the delivery is
    /// outstanding on the control channel until settled.
    func get(queue name: String, autoAck: Bool) throws(AMQPError) -> AMQPDelivery? {
        try WireLimits.checkShortString(name, "the queue name", call: "basic.get")
        let channel = try controlChannel()
        let connection = try liveConnection()
        let subject = "queue '\(name)'"
        let reply = amqp_basic_get(connection, channel.number, arena.bytes(name), autoAck ? 1 : 0)
        switch RabbitCall.classify(reply, call: "amqp_basic_get", subject: subject) {
        case .ok(let method):
            guard method.id == AMQP_BASIC_GET_OK_METHOD else { return nil }  // basic.get-empty
            let getOK = method.decoded.assumingMemoryBound(to: amqp_basic_get_ok_t.self).pointee
            let exchange = FieldTableCodec.string(getOK.exchange)
            let routingKey = FieldTableCodec.string(getOK.routing_key)
            guard let content = readContent(on: channel, call: "amqp_read_message(basic.get-ok)") else {
                throw fatal
                    ?? AMQPError(code: .channelClosed, call: "amqp_read_message", message: "channel closed", subject: subject)
            }
            if !autoAck { channel.ledger.record(getOK.delivery_tag) }
            return AMQPDelivery(
                .init(
                    body: content.body,
                    exchange: exchange,
                    routingKey: routingKey,
                    deliveryTag: getOK.delivery_tag,
                    redelivered: getOK.redelivered != 0,
                    properties: content.properties,
                    consumerTag: "",
                    messageCount: getOK.message_count,
                    channelSession: channel.session
                ))
        case let outcome:
            throw fail(outcome, channel: channel)
        }
    }

    private static func check(_ binding: AMQPBinding, call: String) throws(AMQPError) {
        try WireLimits.checkShortString(binding.queue, "the queue name", call: call)
        try WireLimits.checkShortString(binding.exchange, "the exchange name", call: call)
        try WireLimits.checkShortString(binding.routingKey, "the routing key", call: call)
        try WireLimits.checkTable(binding.arguments, "the arguments", call: call)
    }
}
