import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A minimal HTTP CONNECT proxy on loopback, for tests that must prove a client really tunnels
/// through its configured proxy (and authenticates to it).
///
/// It answers `CONNECT host:port` with `200 Connection Established` and then copies bytes both
/// ways; when ``Credentials`` are set, a request without the matching
/// `Proxy-Authorization: Basic …` gets `407` and the connection is closed. ``statistics`` counts
/// what happened. Anything but CONNECT gets `405`.
///
/// Thread rules: `Sendable`; it runs on its own one-thread event loop group until ``shutdown()``.
public final class ConnectProxy: Sendable {
    public struct Credentials: Sendable, Hashable {
        public var user: String
        public var password: String

        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    public struct Statistics: Sendable, Hashable {
        /// CONNECT requests received.
        public var connectRequests = 0
        /// Requests that carried a `Proxy-Authorization` header.
        public var authenticationAttempts = 0
        /// Requests whose credentials matched (or any request when none are required) and that
        /// were allowed to tunnel.
        public var authenticatedRequests = 0
        /// Requests answered with 407.
        public var rejectedRequests = 0
        /// Tunnels established to a target.
        public var tunnelsOpened = 0
        /// Targets the proxy could not connect to (answered 502).
        public var failedConnects = 0
        /// `host:port` of every CONNECT, in order.
        public var targets: [String] = []
    }

    /// The bound port on 127.0.0.1.
    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: any Channel
    private let counters: ProxyCounters

    private init(port: Int, group: MultiThreadedEventLoopGroup, serverChannel: any Channel, counters: ProxyCounters) {
        self.port = port
        self.group = group
        self.serverChannel = serverChannel
        self.counters = counters
    }

    /// `http://127.0.0.1:<port>`, what a client's proxy setting takes.
    public var url: String { "http://127.0.0.1:\(port)" }

    public var statistics: Statistics {
        counters.state.withLock { $0 }
    }

    /// Starts the proxy on an ephemeral port.
    ///
    /// - Throws: the socket error if binding fails.
    public static func start(credentials: Credentials? = nil) async throws -> ConnectProxy {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counters = ProxyCounters()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectRequestHandler(credentials: credentials, statistics: counters)
                    )
                }
            }
        do {
            let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
            return ConnectProxy(port: channel.localAddress?.port ?? 0, group: group, serverChannel: channel, counters: counters)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Stops listening, drops every tunnel and stops the event loop.
    public func shutdown() async {
        try? await serverChannel.close()
        try? await group.shutdownGracefully()
    }
}

/// The proxy's counters, shared by its handlers.
private final class ProxyCounters: Sendable {
    let state = Mutex(ConnectProxy.Statistics())

    func record(_ update: (inout ConnectProxy.Statistics) -> Void) {
        state.withLock { update(&$0) }
    }
}

/// Reads the CONNECT request head, checks credentials, connects to the target and then replaces
/// itself with a pair of glue handlers.
private final class ConnectRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let credentials: ConnectProxy.Credentials?
    private let statistics: ProxyCounters
    private var buffered: ByteBuffer?
    private var headReceived = false

    init(credentials: ConnectProxy.Credentials?, statistics: ProxyCounters) {
        self.credentials = credentials
        self.statistics = statistics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if buffered == nil { buffered = incoming } else { buffered!.writeBuffer(&incoming) }
        guard !headReceived, let buffer = buffered else { return }
        let bytes = buffer.readableBytesView
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if bytes.count > 16 * 1024 { respond(context: context, status: "431 Request Header Fields Too Large", close: true) }
            return
        }
        headReceived = true
        let headLength = end.upperBound - bytes.startIndex
        let head = String(decoding: bytes.prefix(headLength), as: UTF8.self)
        buffered!.moveReaderIndex(forwardBy: headLength)
        handle(head: head, context: context)
    }

    private func handle(head: String, context: ChannelHandlerContext) {
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        guard requestLine.count == 3, requestLine[0] == "CONNECT" else {
            respond(context: context, status: "405 Method Not Allowed", close: true)
            return
        }
        let target = String(requestLine[1])
        var authorization: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == "proxy-authorization" {
                authorization = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        let allowed = credentials.map { Self.matches(authorization, $0) } ?? true
        statistics.record {
            $0.connectRequests += 1
            $0.targets.append(target)
            if authorization != nil { $0.authenticationAttempts += 1 }
            if allowed { $0.authenticatedRequests += 1 } else { $0.rejectedRequests += 1 }
        }
        guard allowed else {
            respond(
                context: context,
                status: "407 Proxy Authentication Required",
                extraHeaders: "Proxy-Authenticate: Basic realm=\"herald-test\"\r\n",
                close: true
            )
            return
        }
        guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else {
            respond(context: context, status: "400 Bad Request", close: true)
            return
        }
        let host = String(target[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let upstream):
                    self.statistics.record { $0.tunnelsOpened += 1 }
                    self.tunnel(context: context, to: upstream)
                case .failure:
                    self.statistics.record { $0.failedConnects += 1 }
                    self.respond(context: context, status: "502 Bad Gateway", close: true)
                }
            }
    }

    private func tunnel(context: ChannelHandlerContext, to upstream: any Channel) {
        let (local, remote) = GlueHandler.matchedPair()
        do {
            try upstream.pipeline.syncOperations.addHandler(remote)
        } catch {
            upstream.close(promise: nil)
            respond(context: context, status: "502 Bad Gateway", close: true)
            return
        }
        let leftover = buffered
        buffered = nil
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")), promise: nil)
        do {
            try context.pipeline.syncOperations.addHandler(local)
        } catch {
            upstream.close(promise: nil)
            context.close(promise: nil)
            return
        }
        if let leftover, leftover.readableBytes > 0 {
            upstream.writeAndFlush(leftover, promise: nil)
        }
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
        context.channel.setOption(.autoRead, value: true).whenComplete { _ in }
    }

    private func respond(context: ChannelHandlerContext, status: String, extraHeaders: String = "", close: Bool) {
        let text = "HTTP/1.1 \(status)\r\n\(extraHeaders)Content-Length: 0\r\nConnection: close\r\n\r\n"
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(string: text))).whenComplete { _ in
            if close { channel.close(promise: nil) }
        }
    }

    private static func matches(_ authorization: String?, _ credentials: ConnectProxy.Credentials) -> Bool {
        guard let authorization, authorization.lowercased().hasPrefix("basic ") else { return false }
        let encoded = authorization.dropFirst("basic ".count).trimmingCharacters(in: .whitespaces)
        guard let data = Data(base64Encoded: encoded) else { return false }
        return String(decoding: data, as: UTF8.self) == "\(credentials.user):\(credentials.password)"
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
