import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import X509

/// Serves one HTTP/2 stream: collects the request's HEADERS and DATA frames, asks the server's
/// responder for the answer, and answers with HEADERS and one DATA frame carrying END_STREAM.
///
/// The response ends on its last frame, never with an extra empty DATA frame: a client that
/// has all the bytes `content-length` promised would otherwise see the stream still open and
/// reset it (libcurl does), and many resets trip NIO's RST_STREAM flood protection.
///
/// Thread rules: NIO calls it on the stream channel's event loop, and the answer is written on
/// that loop (``ServerConnection/answer(_:on:write:)``).
final class HTTP2StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let connection: ServerConnection
    private let clientCertificate: Certificate?
    private var requestHeaders: HPACKHeaders?
    private var body: [UInt8] = []
    private var streamID = 0
    private var dispatched = false
    private var isActive = true
    /// The stream counts as open in the ledger from the request's HEADERS until the response's
    /// END_STREAM is written (or the client resets it): what the peer's stream limit counts.
    private var countedOpen = false

    init(connection: ServerConnection, clientCertificate: Certificate?) {
        self.connection = connection
        self.clientCertificate = clientCertificate
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // On the loop, the stream channel's option future is already complete.
        context.channel.getOption(HTTP2StreamChannelOptions.streamID).assumeIsolated().whenSuccess { id in
            self.streamID = Int(Int32(id))
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        isActive = false
        countClosed()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isActive = false
        countClosed()
        context.fireChannelInactive()
    }

    private func countClosed() {
        guard countedOpen else { return }
        countedOpen = false
        connection.ledger.streamClosed(connection.id)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if requestHeaders == nil {  // later HEADERS are trailers
                requestHeaders = headers.headers
                connection.noteStream(streamID)
                countedOpen = true
                connection.ledger.streamOpened(connection.id)
            }
            if headers.endStream { dispatch(context: context) }
        case .data(let data):
            if case .byteBuffer(let buffer) = data.data {
                body.append(contentsOf: buffer.readableBytesView)
            }
            if data.endStream { dispatch(context: context) }
        default:
            break
        }
    }

    private func dispatch(context: ChannelHandlerContext) {
        guard !dispatched, let headers = requestHeaders else { return }
        dispatched = true
        var method = "GET"
        var path = "/"
        var authority: String?
        var fields: [(name: String, value: String)] = []
        for (name, value, _) in headers {
            switch name {
            case ":method": method = value
            case ":path": path = value
            case ":authority": authority = value
            case _ where name.hasPrefix(":"): break
            default: fields.append((name: name, value: value))
            }
        }
        let request = ServerRequest(
            method: method,
            path: path,
            authority: authority,
            headers: fields,
            body: body,
            connectionID: connection.id,
            streamID: streamID,
            httpVersion: "HTTP/2",
            clientCertificate: clientCertificate
        )
        body = []
        let isHead = method == "HEAD"
        connection.answer(request, on: context.eventLoop) { response in
            self.write(response, isHead: isHead, context: context)
        }
    }

    private func write(_ response: ServerResponse, isHead: Bool, context: ChannelHandlerContext) {
        guard isActive else { return }  // the client reset the stream or the connection closed
        // Counted before writing, so a client that has the response always finds it counted.
        connection.ledger.served(connection.id)
        let sendsBody = ResponseRules.allowsBody(status: response.status, isHead: isHead)
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(response.status))
        for field in response.headers {
            let name = field.name.lowercased()
            guard !ResponseRules.isManagedHeader(name) else { continue }
            headers.add(name: name, value: field.value)
        }
        if ResponseRules.allowsContentLength(status: response.status) {
            headers.add(name: "content-length", value: String(response.body.count))
        }
        let body = sendsBody ? response.body : []
        context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: body.isEmpty))), promise: nil)
        if !body.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: body)
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
        }
        context.flush()
        countClosed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.logger.debug("stream error", metadata: ["connection": "\(connection.id)", "error": "\(error)"])
        context.close(promise: nil)
    }
}
