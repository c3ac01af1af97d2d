import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import X509

/// Serves every stream of one HTTP/2 connection at the frame level: collects each request's
/// HEADERS and DATA frames by stream id, asks the server's responder for the answer, and answers
/// with HEADERS and one DATA frame carrying END_STREAM.
///
/// Why frames and not NIO's stream multiplexer: the multiplexer makes a child channel per
/// stream (a channel, its pipeline, handler contexts, option and close futures), activates it,
/// routes every frame through it and tears it down again. For a stand-in that answers a
/// 200-byte push with a 29-byte HEADERS frame, that per-stream machinery was the larger part of
/// the sandbox's CPU per request. Here a stream is one dictionary entry; NIO's connection state
/// machine (``NIOHTTP2Handler``, in front of this handler) still validates every frame, enforces
/// the stream limit and the reset-flood protection, and closes streams.
///
/// Flow control the multiplexer did for us is done here: when the connection's or a stream's
/// inbound window falls below half its target, a WINDOW_UPDATE brings it back (the target of a
/// stream is the initial window the server announced; of the connection, its own target).
///
/// The response ends on its last frame, never with an extra empty DATA frame: a client that has
/// all the bytes `content-length` promised would otherwise see the stream still open and reset
/// it (libcurl does), and many resets trip NIO's RST_STREAM flood protection.
///
/// Flushes: answers written while the connection's read burst is handled are flushed once, at
/// `channelReadComplete` (one TLS record and one `write(2)` for the burst); an answer written
/// later (a response delay's timer, an async handler) is flushed at once. (Deferring those
/// flushes to the end of the event-loop tick, to join answers whose timers fire together, was
/// slower under h2load: docs/performance.md, "The sandbox flushes a delayed answer at once".)
///
/// Thread rules: a channel handler: NIO calls it on the connection's event loop only, and every
/// answer is written on that loop (``ServerConnection/answer(_:on:write:)``).
final class HTTP2FrameHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// A stream whose request has begun and whose response has not been written.
    private struct Stream {
        var headers: HPACKHeaders?
        var body: [UInt8] = []
        var dispatched = false
    }

    private let connection: ServerConnection
    private let clientCertificate: Certificate?
    private let streamWindowTarget: Int
    private let connectionWindowTarget: Int
    private var streams: [HTTP2StreamID: Stream] = [:]
    private var isActive = true
    private var inReadBurst = false
    private var needsFlush = false

    init(connection: ServerConnection, clientCertificate: Certificate?, streamWindowTarget: Int, connectionWindowTarget: Int) {
        self.connection = connection
        self.clientCertificate = clientCertificate
        self.streamWindowTarget = streamWindowTarget
        self.connectionWindowTarget = connectionWindowTarget
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        close()
    }

    func channelInactive(context: ChannelHandlerContext) {
        close()
        context.fireChannelInactive()
    }

    private func close() {
        guard isActive else { return }
        isActive = false
        for _ in streams.keys { connection.ledger.streamClosed(connection.id) }
        streams.removeAll()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        inReadBurst = true
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if streams[frame.streamID] == nil {
                guard frame.streamID != .rootStream else { return }
                streams[frame.streamID] = Stream(headers: headers.headers)
                connection.noteStream(Int(Int32(frame.streamID)))
                connection.ledger.streamOpened(connection.id)
            }
            // Later HEADERS are trailers: they only end the request.
            if headers.endStream { dispatch(frame.streamID, context: context) }
        case .data(let data):
            guard streams[frame.streamID] != nil else { return }
            if case .byteBuffer(let buffer) = data.data {
                streams[frame.streamID]!.body.append(contentsOf: buffer.readableBytesView)
            }
            if data.endStream { dispatch(frame.streamID, context: context) }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        inReadBurst = false
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent {
            // A reset by the client, or the end of a stream we answered: either way no answer
            // may be written on it any more.
            if streams.removeValue(forKey: closed.streamID) != nil {
                connection.ledger.streamClosed(connection.id)
            }
        } else if let window = event as? NIOHTTP2WindowUpdatedEvent {
            updateWindow(window, context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Tops an inbound window up once it is below half its target (what NIO's stream channels
    /// and multiplexer do for the connection and each stream).
    private func updateWindow(_ event: NIOHTTP2WindowUpdatedEvent, context: ChannelHandlerContext) {
        guard let inbound = event.inboundWindowSize else { return }
        let target: Int
        if event.streamID == .rootStream {
            target = connectionWindowTarget
        } else {
            // A stream whose request is complete is half-closed: it receives no more DATA.
            guard let stream = streams[event.streamID], !stream.dispatched else { return }
            target = streamWindowTarget
        }
        guard inbound < target / 2 else { return }
        let frame = HTTP2Frame(streamID: event.streamID, payload: .windowUpdate(windowSizeIncrement: target - inbound))
        context.write(wrapOutboundOut(frame), promise: nil)
        requestFlush(context: context)
    }

    private func dispatch(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard var stream = streams[streamID], !stream.dispatched, let headers = stream.headers else { return }
        stream.dispatched = true
        let body = stream.body
        stream.body = []
        stream.headers = nil
        streams[streamID] = stream

        var method = "GET"
        var path = "/"
        var authority: String?
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(headers.count)
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
            streamID: Int(Int32(streamID)),
            httpVersion: "HTTP/2",
            clientCertificate: clientCertificate
        )
        let isHead = method == "HEAD"
        connection.answer(request, on: context.eventLoop) { response in
            self.write(response, on: streamID, isHead: isHead, context: context)
        }
    }

    private func write(_ response: ServerResponse, on streamID: HTTP2StreamID, isHead: Bool, context: ChannelHandlerContext) {
        // Gone: the client reset the stream or the connection closed.
        guard isActive, streams.removeValue(forKey: streamID) != nil else { return }
        // Counted before writing, so a client that has the response always finds it counted.
        connection.ledger.served(connection.id)
        connection.ledger.streamClosed(connection.id)
        let sendsBody = ResponseRules.allowsBody(status: response.status, isHead: isHead)
        var headers = HPACKHeaders()
        headers.reserveCapacity(response.headers.count + 2)
        headers.add(name: ":status", value: Self.statusText(response.status))
        for field in response.headers {
            let name = Self.lowercased(field.name)
            guard !ResponseRules.isManagedHeader(name) else { continue }
            headers.add(name: name, value: field.value)
        }
        if ResponseRules.allowsContentLength(status: response.status) {
            headers.add(name: "content-length", value: String(response.body.count))
        }
        let body = sendsBody ? response.body : []
        let headersFrame = HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: body.isEmpty)))
        context.write(wrapOutboundOut(headersFrame), promise: nil)
        if !body.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: body)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))), promise: nil)
        }
        requestFlush(context: context)
    }

    /// Flushes at the end of the read burst, or at once outside one.
    private func requestFlush(context: ChannelHandlerContext) {
        if inReadBurst {
            needsFlush = true
            return
        }
        context.flush()
    }

    private static func statusText(_ status: Int) -> String {
        switch status {
        case 200: "200"
        case 400: "400"
        case 403: "403"
        case 404: "404"
        case 410: "410"
        default: String(status)
        }
    }

    /// Header names come lowercase from the stand-ins; copy only when one is not.
    private static func lowercased(_ name: String) -> String {
        name.utf8.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) ? name.lowercased() : name
    }

}
