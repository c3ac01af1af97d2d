import Logging
import NIOCore
import NIOHTTP1
import X509

/// Serves the requests of one HTTP/1.1 connection (after ALPN chose `http/1.1`), one at a time
/// (NIO's server pipeline handler holds back pipelined requests until a response ends).
///
/// Thread rules: NIO calls it on the connection's event loop, and the answer is written on that
/// loop (``ServerConnection/answer(_:on:write:)``).
final class HTTP1ConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let connection: ServerConnection
    private let clientCertificate: Certificate?
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var requestsOnConnection = 0
    private var isActive = true

    init(connection: ServerConnection, clientCertificate: Certificate?) {
        self.connection = connection
        self.clientCertificate = clientCertificate
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        isActive = false
    }

    func channelInactive(context: ChannelHandlerContext) {
        isActive = false
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            requestsOnConnection += 1
            connection.ledger.streamOpened(connection.id)
        case .body(let buffer):
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else { return }
            self.head = nil
            dispatch(context: context, head: head)
        }
    }

    private func dispatch(context: ChannelHandlerContext, head: HTTPRequestHead) {
        let request = ServerRequest(
            method: head.method.rawValue,
            path: head.uri,
            authority: head.headers.first(name: "host"),
            headers: head.headers.map { (name: $0.name, value: $0.value) },
            body: body,
            connectionID: connection.id,
            streamID: requestsOnConnection,
            httpVersion: "HTTP/1.1",
            clientCertificate: clientCertificate
        )
        body = []
        let keepAlive = head.isKeepAlive
        let isHead = head.method == .HEAD
        let version = head.version
        connection.answer(request, on: context.eventLoop) { response in
            self.write(response, version: version, keepAlive: keepAlive, isHead: isHead, context: context)
        }
    }

    private func write(_ response: ServerResponse, version: HTTPVersion, keepAlive: Bool, isHead: Bool, context: ChannelHandlerContext) {
        connection.ledger.streamClosed(connection.id)
        guard isActive else { return }
        // Counted before writing, so a client that has the response always finds it counted.
        connection.ledger.served(connection.id)
        var headers = HTTPHeaders()
        for field in response.headers where !ResponseRules.isManagedHeader(field.name.lowercased()) {
            headers.add(name: field.name, value: field.value)
        }
        if ResponseRules.allowsContentLength(status: response.status) {
            headers.add(name: "content-length", value: String(response.body.count))
        }
        if !keepAlive { headers.add(name: "connection", value: "close") }
        let head = HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if ResponseRules.allowsBody(status: response.status, isHead: isHead), !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        let channel = context.channel
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.logger.debug("HTTP/1.1 connection error", metadata: ["connection": "\(connection.id)", "error": "\(error)"])
        context.close(promise: nil)
    }
}
