import NIOCore

/// Joins everything written between two flushes into one buffer, so that TLS seals one record
/// per flush instead of one per HTTP/2 frame.
///
/// NIO's HTTP/2 handler writes each frame as its own buffer and NIOSSL encrypts each write into
/// its own record. An APNs answer is a 29-byte HEADERS frame: a hundred answers flushed at once
/// made a hundred records, which the server sealed one by one and the client (libcurl) read one
/// by one, two `recvfrom` each. One record per flush cuts both sides' work per request.
///
/// Thread rules: a channel handler, on its channel's event loop only.
final class WriteCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var pending: ByteBuffer?
    private var promises: [EventLoopPromise<Void>] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .byteBuffer(var buffer):
            if pending == nil {
                pending = buffer
            } else {
                pending!.writeBuffer(&buffer)
            }
            if let promise { promises.append(promise) }
        case .fileRegion:
            writePending(context: context)
            context.write(data, promise: promise)
        }
    }

    func flush(context: ChannelHandlerContext) {
        writePending(context: context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        writePending(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        writePending(context: context)
    }

    private func writePending(context: ChannelHandlerContext) {
        guard let buffer = pending else { return }
        pending = nil
        let waiting = promises
        promises.removeAll(keepingCapacity: true)
        var promise: EventLoopPromise<Void>?
        if !waiting.isEmpty {
            let joined = context.eventLoop.makePromise(of: Void.self)
            for each in waiting { joined.futureResult.cascade(to: each) }
            promise = joined
        }
        context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: promise)
    }
}
