internal import CRabbitMQ
import DequeModule
import Foundation
import Glibc
import Logging

/// The sole owner of one librabbitmq connection, living on its own thread.
///
/// librabbitmq is not thread-safe, so this object, the `amqp_connection_state_t` and every C value
/// built for it are touched only by the thread started in ``start(configuration:logger:)``.
/// Other tasks reach it through ``ConnectionCore``'s command queue.
///
/// The thread's loop, each turn:
/// 1. run the queued commands (operations, publishes, settlements) in order;
/// 2. send the gathered acks, coalesced (``DeliveryLedger``);
/// 3. publish from the outbox while fewer than `publishWindow` confirms are outstanding;
/// 4. read the frames that have arrived, without blocking (deliveries, confirms, returns,
///    cancels, channel and connection closes, blocked/unblocked): one socket read's worth;
/// 5. `amqp_maybe_release_buffers`;
/// 6. when nothing was published and the read is used up, `poll` on the socket and the wake
///    pipe for up to 50 ms (it returns at once when either has something). Heartbeats
///    are serviced in step 4, so the loop never stays out of the library longer than that.
///
/// A library failure or a broker `connection.close` makes the loop end: every consumer stream
/// throws, every pending publish and command fails, and the connection is destroyed once.
final class ConnectionDriver {
    let core: ConnectionCore
    let configuration: AMQPConfiguration
    let logger: Logger
    /// The librabbitmq connection; `nil` once destroyed.
    var connection: OpaquePointer?
    /// Set when the connection can no longer be used; ends the loop.
    var fatal: AMQPError?
    /// C memory for the call in progress; reset after each command and each publish.
    let arena = CArena()

    var channelsByNumber: [UInt16: ChannelState] = [:]
    var channelsBySession: [UInt64: ChannelState] = [:]
    /// Consumer channels by consumer id.
    var consumerChannels: [UInt64: ChannelState] = [:]
    /// Consumers that got deliveries in the current read turn (``readFrames(budget:)``).
    var consumersWithDeliveries: [ConsumerRecord] = []
    var control: ChannelState?
    var publisher: ChannelState?
    var nextSession: UInt64 = 1
    var nextChannelNumber: UInt16 = 1
    var channelMax: UInt16 = 2_047
    /// The negotiated frame size limit.
    var frameMax = 131_072

    var outbox = Deque<OutboundPublish>()
    var confirms = PublishTracker()
    /// The broker sent `connection.blocked` (resource alarm): publishing pauses until unblocked.
    var blocked = false
    /// Set by the close command: the loop finishes confirms until then, then closes.
    var closeDeadline: ContinuousClock.Instant?

    private init(core: ConnectionCore) {
        self.core = core
        configuration = core.configuration
        logger = core.logger
    }

    /// Starts the connection thread, connects and logs in, and returns once the connection is open.
    /// - Throws: ``AMQPError`` with ``AMQPError/Code/connectionFailed``,
    ///   ``AMQPError/Code/authenticationFailed``, ``AMQPError/Code/tlsFailed`` or
    ///   ``AMQPError/Code/timeout``.
    static func start(configuration: AMQPConfiguration, logger: Logger) async throws(AMQPError) -> ConnectionCore {
        let core = try ConnectionCore(configuration: configuration, logger: logger)
        let opened = await withCheckedContinuation { (continuation: CheckedContinuation<AMQPError?, Never>) in
            let thread = Thread {
                let driver = ConnectionDriver(core: core)
                do throws(AMQPError) {
                    try driver.openFirstReachable()
                } catch {
                    core.markClosed(error)
                    continuation.resume(returning: error)
                    return
                }
                core.markOpen()
                continuation.resume(returning: nil)
                driver.run()
            }
            thread.name = "herald-amqp"
            thread.start()
        }
        if let opened { throw opened }
        return core
    }

    // MARK: Opening

    /// Opens the connection on the first node (``AMQPConfiguration/nodes``, in order) that
    /// accepts it and the login; a node that fails is logged and the next one tried. Throws the
    /// last node's error, which then names every node tried; the connection is destroyed.
    private func openFirstReachable() throws(AMQPError) {
        let nodes = configuration.nodes
        var tried: [String] = []
        for (index, node) in nodes.enumerated() {
            do throws(AMQPError) {
                try open(node)
                if index > 0 { logger.notice("AMQP connection open on another node", metadata: ["amqp.node": "\(node)"]) }
                return
            } catch {
                destroyConnection()
                tried.append("\(node)")
                guard index < nodes.count - 1 else {
                    var last = error
                    if tried.count > 1 { last.message += " (tried every node: \(tried.joined(separator: ", ")))" }
                    throw last
                }
                logger.warning("AMQP node unreachable; trying the next", metadata: ["amqp.node": "\(node)", "amqp.error": "\(error)"])
            }
        }
    }

    private func open(_ node: AMQPNode) throws(AMQPError) {
        let subject = "\(node)"
        guard let connection = amqp_new_connection() else {
            throw AMQPError(code: .connectionFailed, call: "amqp_new_connection", message: "out of memory")
        }
        self.connection = connection

        let socket: OpaquePointer?
        if let tls = configuration.tls {
            socket = amqp_ssl_socket_new(connection)
            guard let socket else {
                throw AMQPError(code: .tlsFailed, call: "amqp_ssl_socket_new", message: "could not create a TLS socket")
            }
            amqp_ssl_socket_set_verify_peer(socket, tls.verifyPeer ? 1 : 0)
            amqp_ssl_socket_set_verify_hostname(socket, tls.verifyHostname ? 1 : 0)
            if let ca = tls.caCertificatePath {
                try check(amqp_ssl_socket_set_cacert(socket, ca), "amqp_ssl_socket_set_cacert", code: .tlsFailed, subject: ca)
            }
            if let certificate = tls.clientCertificatePath, let key = tls.clientKeyPath {
                try check(
                    amqp_ssl_socket_set_key(socket, certificate, key),
                    "amqp_ssl_socket_set_key",
                    code: .tlsFailed,
                    subject: certificate
                )
            }
        } else {
            socket = amqp_tcp_socket_new(connection)
        }
        guard let socket else {
            throw AMQPError(code: .connectionFailed, call: "amqp_tcp_socket_new", message: "could not create a socket")
        }

        var connectTimeout = Self.timeval(configuration.connectTimeout)
        let opened = amqp_socket_open_noblock(socket, node.host, Int32(node.port), &connectTimeout)
        if opened < 0 {
            var error = RabbitCall.statusError(opened, call: "amqp_socket_open_noblock", subject: subject)
            if error.code == .connectionLost { error.code = .connectionFailed }
            throw error
        }
        _ = amqp_set_handshake_timeout(connection, &connectTimeout)
        var rpcTimeout = Self.timeval(configuration.rpcTimeout)
        _ = amqp_set_rpc_timeout(connection, &rpcTimeout)

        // Client properties: the capabilities rabbitmq-c does not announce itself (so the broker
        // sends basic.cancel when a queue goes away and connection.blocked on alarms), and a name.
        var properties: AMQPTable = [
            "product": "Herald (rabbitmq-c)",
            "capabilities": [
                "consumer_cancel_notify": true,
                "connection.blocked": true,
                "publisher_confirms": true,
                "basic.nack": true,
            ],
        ]
        if let name = configuration.connectionName { properties["connection_name"] = .string(name) }
        var table = FieldTableCodec.encode(properties, in: arena)
        let reply = herald_amqp_login_plain_with_properties(
            connection,
            configuration.virtualHost,
            Int32(clamping: configuration.channelMax),
            Int32(clamping: configuration.frameMax),
            configuration.heartbeatSeconds,
            &table,
            configuration.user,
            configuration.password
        )
        arena.reset()
        switch RabbitCall.classify(reply, call: "amqp_login", subject: subject) {
        case .ok:
            break
        case .connectionClosed(var error):
            error.code = error.replyCode == 403 ? .authenticationFailed : .connectionFailed
            throw error
        case .channelClosed(var error), .library(var error):
            if error.code == .connectionLost { error.code = .connectionFailed }
            // RabbitMQ closes the socket on bad credentials when it cannot send connection.close.
            if error.libraryStatus == AMQP_STATUS_CONNECTION_CLOSED.rawValue
                || error.libraryStatus == AMQP_STATUS_SOCKET_CLOSED.rawValue
            {
                error.message += " (closed during login: wrong credentials or vhost?)"
            }
            throw error
        }
        frameMax = Int(amqp_get_frame_max(connection))
        let negotiated = amqp_get_channel_max(connection)
        channelMax = negotiated > 0 ? UInt16(clamping: negotiated) : UInt16.max
        logger.debug(
            "AMQP connection open",
            metadata: [
                "amqp.url": "\(configuration.redactedURL)",
                "amqp.heartbeat": "\(amqp_get_heartbeat(connection))",
                "amqp.frame_max": "\(amqp_get_frame_max(connection))",
            ]
        )
    }

    private func check(_ status: Int32, _ call: String, code: AMQPError.Code, subject: String?) throws(AMQPError) {
        guard status < 0 else { return }
        var error = RabbitCall.statusError(status, call: call, subject: subject)
        error.code = code
        throw error
    }

    // MARK: The loop

    private func run() {
        while fatal == nil {
            let commands = core.takeCommands()
            var index = 0
            while index < commands.count, fatal == nil {
                execute(commands[index])
                arena.reset()
                index += 1
            }
            if let fatal {
                for command in commands[index...] { command.fail(fatal) }
                break
            }
            flushSettlements()
            let sent = fatal == nil ? pumpPublishes(budget: 256) : 0
            var received = 0
            if fatal == nil {
                received = readFrames(budget: Self.readBudget)
                // A cancelled consumer's last deliveries arrived before its cancel-ok, so the
                // cancel call left them in librabbitmq's queue of frames: once that queue is
                // empty they have all been handed out.
                if fatal == nil, let connection, amqp_frames_enqueued(connection) == 0 { finishDrainedConsumers() }
            }
            if let connection { amqp_maybe_release_buffers(connection) }
            if fatal != nil { break }

            if let closeDeadline {
                if (outbox.isEmpty && confirms.isEmpty) || ContinuousClock.now >= closeDeadline {
                    closeGracefully()
                    return
                }
            }
            // Fewer frames than the budget: the turn's read is used up. Wait right away (`poll`
            // returns at once if more came meanwhile, or a command) instead of a turn that reads
            // nothing. The commands taken were all run, their acks and publishes sent, above.
            if sent == 0, received < Self.readBudget {
                waitForActivity(milliseconds: closeDeadline != nil ? 10 : holdsAcks ? 5 : 50)
            }
        }
        terminate(with: fatal ?? AMQPError(code: .connectionLost, call: "run", message: "connection ended"))
    }

    /// Frames read per turn at most, so that commands and acks are not held up by a long burst.
    static let readBudget = 256

    private func execute(_ command: ConnectionCommand) {
        switch command {
        case .operation(let run, let fail):
            // Gathered and held acks go out before anything that could close their channel.
            flushSettlements(force: true)
            if let fatal { fail(fatal) } else { run(self) }
        case .publish(let message, let completion):
            outbox.append(OutboundPublish(message: message, sink: .single(completion)))
        case .publishBatch(let messages, let completion):
            guard !messages.isEmpty else {
                completion(.success(()))
                return
            }
            let batch = PublishBatch(count: messages.count, completion: completion)
            for (index, message) in messages.enumerated() {
                outbox.append(OutboundPublish(message: message, sink: .batch(batch, index: index)))
            }
        case .settle(let settlement):
            settle(settlement)
        case .settleBatch(let settlements):
            for settlement in settlements where fatal == nil { settle(settlement) }
        case .close:
            flushSettlements(force: true)
            beginClose()
        }
    }

    /// Waits for the socket or the wake pipe, at most `milliseconds`.
    private func waitForActivity(milliseconds: Int32) {
        guard let connection else { return }
        if amqp_frames_enqueued(connection) != 0 || amqp_data_in_buffer(connection) != 0 { return }
        let socket = amqp_get_sockfd(connection)
        withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 2) { descriptors in
            descriptors[0] = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            descriptors[1] = pollfd(fd: core.wake.readDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(descriptors.baseAddress, 2, milliseconds)
            if descriptors[1].revents & Int16(POLLIN) != 0 { core.wake.drain() }
        }
    }

    // MARK: Ending

    /// Records a connection-level failure; the loop ends after the current step.
    func markFatal(_ error: AMQPError) {
        if fatal == nil { fatal = error }
    }

    private func beginClose() {
        guard closeDeadline == nil else { return }
        closeDeadline = ContinuousClock.now + configuration.closeTimeout
        // Stop deliveries to the application; unacknowledged ones return to their queues when the
        // connection closes.
        for channel in consumerChannels.values { channel.consumer?.finish(throwing: nil) }
    }

    private func closeGracefully() {
        for channel in consumerChannels.values { channel.consumer?.finish(throwing: nil) }
        let closed = AMQPError(
            code: .connectionClosed,
            call: "AMQPConnection.close",
            message: "the connection was closed before the broker confirmed the publish"
        )
        var unconfirmed = confirms
        confirms = PublishTracker()
        let unsent = Array(outbox)
        outbox.removeAll()
        if let connection {
            let reply = amqp_connection_close(connection, AMQP_REPLY_SUCCESS)
            if case .ok = RabbitCall.classify(reply, call: "amqp_connection_close") {
                logger.debug("AMQP connection closed", metadata: ["amqp.url": "\(configuration.redactedURL)"])
            } else {
                logger.debug("AMQP connection.close got no clean reply; dropping the socket")
            }
        }
        destroyConnection()
        core.markClosed(nil)
        unconfirmed.failAll(closed)
        for item in unsent { item.sink.complete(closed) }
    }

    private func terminate(with error: AMQPError) {
        logger.warning(
            "AMQP connection lost",
            metadata: ["amqp.url": "\(configuration.redactedURL)", "error": "\(error)"]
        )
        // Closed first, so that whoever sees the failure below also sees `isOpen == false` and has
        // new calls refused.
        destroyConnection()
        core.markClosed(error)
        for channel in consumerChannels.values { channel.consumer?.finish(throwing: error) }
        confirms.failAll(error)
        let failed = outbox
        outbox.removeAll()
        for item in failed { item.sink.complete(error) }
    }

    /// Frees the librabbitmq connection (and its socket); safe to call more than once.
    private func destroyConnection() {
        guard let connection else { return }
        self.connection = nil
        _ = amqp_destroy_connection(connection)
        channelsByNumber.removeAll()
        channelsBySession.removeAll()
        control = nil
        publisher = nil
    }

    static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = duration.components
        let microseconds = attoseconds / 1_000_000_000_000
        return Glibc.timeval(tv_sec: Int(max(0, seconds)), tv_usec: Int(max(0, microseconds)))
    }
}
