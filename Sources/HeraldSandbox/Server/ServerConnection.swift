import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL
import SwiftASN1
import Synchronization
import X509

/// One accepted TCP connection: sets up its pipeline once the protocol is known (HTTP/2 after
/// ALPN or prior knowledge, HTTP/1.1 after ALPN) and gives its stream handlers what they share.
final class ServerConnection: Sendable {
    private struct State {
        var isHTTP2 = false
        /// The highest client stream id seen, for GOAWAY.
        var lastStreamID = 0
    }

    let id: Int
    let channel: any Channel
    private let state = Mutex(State())
    let settings: ConnectionSettings
    let ledger: ConnectionLedger
    let dispatcher: HandlerDispatcher
    let responder: HTTP2Server.Responder
    let logger: Logger

    init(
        id: Int,
        channel: any Channel,
        settings: ConnectionSettings,
        ledger: ConnectionLedger,
        dispatcher: HandlerDispatcher,
        responder: @escaping HTTP2Server.Responder,
        logger: Logger
    ) {
        self.id = id
        self.channel = channel
        self.settings = settings
        self.ledger = ledger
        self.dispatcher = dispatcher
        self.responder = responder
        self.logger = logger
    }

    /// A stream of this connection received its request headers.
    func noteStream(_ streamID: Int) {
        state.withLock { $0.lastStreamID = max($0.lastStreamID, streamID) }
    }

    /// Answers `request` through `write`, which runs on `eventLoop` only: at once, when the
    /// reply's timer fires, or once its async body has returned (on the dispatcher).
    func answer(_ request: ServerRequest, on eventLoop: any EventLoop, write: @escaping (ServerResponse) -> Void) {
        let reply = responder(request)
        switch reply.kind {
        case .response(let response):
            schedule(response, after: reply.delay, on: eventLoop, write: write)
        case .later(let body):
            let boundWrite = NIOLoopBound(write, eventLoop: eventLoop)
            let delay = reply.delay
            dispatcher.submit {
                let response = await body()
                eventLoop.execute { self.schedule(response, after: delay, on: eventLoop, write: boundWrite.value) }
            }
        }
    }

    private func schedule(_ response: ServerResponse, after delay: Duration, on eventLoop: any EventLoop, write: @escaping (ServerResponse) -> Void) {
        guard delay > .zero else {
            write(response)
            return
        }
        let dispatcher = self.dispatcher
        dispatcher.timerStarted()
        eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
            dispatcher.timerEnded()
            write(response)
        }
    }

    /// Closes the connection; HTTP/2 connections say GOAWAY first.
    func close() async {
        let (isHTTP2, lastStreamID) = state.withLock { ($0.isHTTP2, $0.lastStreamID) }
        if isHTTP2 {
            let goAway = HTTP2Frame(
                streamID: .rootStream,
                payload: .goAway(lastStreamID: HTTP2StreamID(lastStreamID), errorCode: .noError, opaqueData: nil)
            )
            try? await channel.writeAndFlush(goAway)
        }
        try? await channel.close()
    }

    /// Each stream's inbound window: announced in SETTINGS and topped up by HTTP2FrameHandler.
    static let streamWindow = 1 << 20

    func configureHTTP2(_ channel: any Channel, applicationProtocol: String) -> EventLoopFuture<Void> {
        ledger.negotiated(id, applicationProtocol: applicationProtocol)
        let clientCertificate = Self.peerCertificate(channel)
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: settings.maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
            HTTP2Setting(parameter: .initialWindowSize, value: Self.streamWindow),
        ]
        connectionConfiguration.targetWindowSize = 1 << 24
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.targetWindowSize = Self.streamWindow
        streamConfiguration.streamResetFrameRateLimit.maximumCount = settings.resetFrameLimit
        // Frames, not a stream multiplexer: see HTTP2FrameHandler for why.
        return channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(WriteCoalescingHandler())
            try pipeline.addHandler(
                NIOHTTP2Handler(mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration)
            )
            try pipeline.addHandler(
                HTTP2FrameHandler(
                    connection: self,
                    clientCertificate: clientCertificate,
                    streamWindowTarget: Self.streamWindow,
                    connectionWindowTarget: connectionConfiguration.targetWindowSize
                )
            )
            try pipeline.addHandler(ConnectionErrorLogger(connectionID: self.id, logger: self.logger))
            // Only now may close() write HTTP/2 frames into the pipeline.
            self.state.withLock { $0.isHTTP2 = true }
        }
    }

    func configureHTTP1(_ channel: any Channel) -> EventLoopFuture<Void> {
        guard settings.allowHTTP1 else {
            logger.debug("closing a connection that did not negotiate h2", metadata: ["connection": "\(id)"])
            return channel.close()
        }
        ledger.negotiated(id, applicationProtocol: "http/1.1")
        let clientCertificate = Self.peerCertificate(channel)
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(
                HTTP1ConnectionHandler(connection: self, clientCertificate: clientCertificate)
            )
        }
    }

    /// The client's certificate once TLS has completed (nil without TLS or without one).
    private static func peerCertificate(_ channel: any Channel) -> Certificate? {
        guard let certificate = try? channel.pipeline.syncOperations.nioSSL_peerCertificate(),
            let der = try? certificate.toDERBytes()
        else { return nil }
        return try? Certificate(derEncoded: der)
    }
}

/// Logs connection-level errors (protocol violations, DoS limits that make NIO send GOAWAY);
/// NIO closes the connection itself.
final class ConnectionErrorLogger: ChannelInboundHandler {
    typealias InboundIn = Any

    private let connectionID: Int
    private let logger: Logger

    init(connectionID: Int, logger: Logger) {
        self.connectionID = connectionID
        self.logger = logger
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("HTTP/2 connection error", metadata: ["connection": "\(connectionID)", "error": "\(error)"])
        context.fireErrorCaught(error)
    }
}
