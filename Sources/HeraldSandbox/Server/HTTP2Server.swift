import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization
import X509

/// A local HTTP/2 server (TLS with ALPN `h2`, optionally `http/1.1`; or cleartext prior
/// knowledge) that answers every request through a responder (or an async handler). The base
/// of `herald sandbox`'s APNs and FCM stand-ins and of Herald's HTTP client tests.
///
/// It records per connection what tests need to assert about multiplexing in ``ledger``:
/// requests served and the most streams open at once.
///
/// Thread rules: `Sendable`. The server runs on its own NIO event loop group. A responder runs
/// on the connection's event loop and must not block; what it answers ``ServerReply/now(_:after:)``
/// is written from that loop (after a timer, for a delay), with no task per request. Async
/// handlers (and ``ServerReply/later(after:_:)``) run as child tasks of one task the server
/// owns, so ``shutdown(gracePeriod:)`` can cancel them (a handler sleeping with `Task.sleep`
/// returns early); they may take as long as they like.
public final class HTTP2Server: Sendable {
    /// Answers one request. Called concurrently, once per request.
    public typealias Handler = @Sendable (ServerRequest) async -> ServerResponse
    /// Decides how to answer one request, on the connection's event loop; must not block.
    public typealias Responder = @Sendable (ServerRequest) -> ServerReply

    public let configuration: HTTP2ServerConfiguration
    /// The bound port (the chosen one when the configuration asked for 0).
    public let port: Int
    /// Per-connection counters.
    public let ledger: ConnectionLedger

    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: any Channel
    private let dispatcher: HandlerDispatcher
    private let connections: ConnectionRegistry
    private let shutdownTask = Mutex<Task<Void, Never>?>(nil)
    private let logger: Logger

    private init(
        configuration: HTTP2ServerConfiguration,
        port: Int,
        ledger: ConnectionLedger,
        group: MultiThreadedEventLoopGroup,
        serverChannel: any Channel,
        dispatcher: HandlerDispatcher,
        connections: ConnectionRegistry,
        logger: Logger
    ) {
        self.configuration = configuration
        self.port = port
        self.ledger = ledger
        self.group = group
        self.serverChannel = serverChannel
        self.dispatcher = dispatcher
        self.connections = connections
        self.logger = logger
    }

    /// Binds and starts serving, every request answered by an async `handler` (a task each).
    ///
    /// - Throws: `NIOSSLError` for an unusable certificate or key, or the socket error if the
    ///   address cannot be bound.
    public static func start(
        configuration: HTTP2ServerConfiguration,
        logger: Logger = Logger(label: "herald.sandbox.server"),
        handler: @escaping Handler
    ) async throws -> HTTP2Server {
        try await start(configuration: configuration, logger: logger, responder: { request in .later { await handler(request) } })
    }

    /// Binds and starts serving, every request answered through `responder`.
    ///
    /// - Throws: `NIOSSLError` for an unusable certificate or key, or the socket error if the
    ///   address cannot be bound.
    public static func start(
        configuration: HTTP2ServerConfiguration,
        logger: Logger = Logger(label: "herald.sandbox.server"),
        responder: @escaping Responder
    ) async throws -> HTTP2Server {
        let sslContext = try configuration.tls.map(makeSSLContext)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.eventLoopThreads))
        let ledger = ConnectionLedger()
        let connections = ConnectionRegistry()
        let dispatcher = HandlerDispatcher.start()
        let settings = ConnectionSettings(
            maxConcurrentStreams: configuration.maxConcurrentStreams,
            allowHTTP1: configuration.tls?.allowHTTP1 ?? false,
            resetFrameLimit: max(1, configuration.resetFrameLimit)
        )

        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let id = connections.nextID()
                ledger.opened(id)
                let connection = ServerConnection(
                    id: id,
                    channel: channel,
                    settings: settings,
                    ledger: ledger,
                    dispatcher: dispatcher,
                    responder: responder,
                    logger: logger
                )
                connections.add(connection)
                channel.closeFuture.whenComplete { _ in
                    ledger.closed(id)
                    connections.remove(id)
                }
                guard let sslContext else {
                    return connection.configureHTTP2(channel, applicationProtocol: "h2c")
                }
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return channel.configureHTTP2SecureUpgrade(
                    h2ChannelConfigurator: { connection.configureHTTP2($0, applicationProtocol: "h2") },
                    http1ChannelConfigurator: { connection.configureHTTP1($0) }
                )
            }

        do {
            let serverChannel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
            let port = serverChannel.localAddress?.port ?? configuration.port
            logger.debug("HTTP/2 server listening", metadata: ["port": "\(port)", "tls": "\(configuration.tls != nil)"])
            return HTTP2Server(
                configuration: configuration,
                port: port,
                ledger: ledger,
                group: group,
                serverChannel: serverChannel,
                dispatcher: dispatcher,
                connections: connections,
                logger: logger
            )
        } catch {
            await dispatcher.stop()
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// `https://localhost:<port>` with TLS, `http://127.0.0.1:<port>` without.
    public var baseURL: String {
        configuration.tls == nil ? "http://\(configuration.host):\(port)" : "https://localhost:\(port)"
    }

    /// Closes every open connection but keeps listening. HTTP/2 connections first get a GOAWAY
    /// naming the last stream the server took, as real servers send, so that clients stop
    /// reusing them; requests still running on them are cut off.
    public func closeAllConnections() async {
        for connection in connections.all() {
            await connection.close()
        }
    }

    /// Stops listening, lets running handlers finish for up to `gracePeriod`, cancels the rest,
    /// closes every connection and stops the event loops. Idempotent: later calls wait for the
    /// first to finish.
    public func shutdown(gracePeriod: Duration = .zero) async {
        let task = shutdownTask.withLock { task -> Task<Void, Never> in
            if let task { return task }
            let newTask = Task { await self.performShutdown(gracePeriod: gracePeriod) }
            task = newTask
            return newTask
        }
        await task.value
    }

    private func performShutdown(gracePeriod: Duration) async {
        try? await serverChannel.close()
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: gracePeriod)
        while dispatcher.running > 0, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        await dispatcher.stop()
        await closeAllConnections()
        do {
            try await group.shutdownGracefully()
        } catch {
            logger.warning("event loop group did not shut down cleanly", metadata: ["error": "\(error)"])
        }
    }

    private static func makeSSLContext(_ tls: HTTP2ServerConfiguration.TLS) throws -> NIOSSLContext {
        let chain = try tls.certificateChainPEM.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }
        let key = try NIOSSLPrivateKey(bytes: Array(tls.privateKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        configuration.applicationProtocols = tls.allowHTTP1 ? ["h2", "http/1.1"] : ["h2"]
        // Closing waits this long for the client's close_notify. Clients rarely read an idle
        // connection (libcurl does not), so keep it short: closeAllConnections() and shutdown
        // would otherwise take NIO's default 5 s.
        configuration.shutdownTimeout = .milliseconds(200)
        if let trust = tls.clientCertificateTrustPEM {
            configuration.certificateVerification = tls.clientCertificateOptional ? .optionalVerification : .noHostnameVerification
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(trust.utf8)))
            configuration.sendCANameList = true
        }
        return try NIOSSLContext(configuration: configuration)
    }
}
