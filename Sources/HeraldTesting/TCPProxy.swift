import NIOCore
import NIOPosix
import Synchronization

/// A loopback TCP forwarder that tests put between a client and a real service (RabbitMQ,
/// PostgreSQL) to cut connections on demand, without touching the shared service.
///
/// ```swift
/// let proxy = try await TCPProxy.start(targetHost: "127.0.0.1", targetPort: 5672)
/// // connect the client to 127.0.0.1:proxy.port …
/// await proxy.severAll()        // both sides of every proxied connection are reset
/// try await proxy.shutdown()
/// ```
///
/// New connections keep being accepted after `severAll()`; `shutdown()` stops listening and cuts
/// everything. Runs on NIO's shared event loops; safe to call from any task.
public final class TCPProxy: Sendable {
    /// The port the proxy listens on (127.0.0.1).
    public let port: Int
    public let targetHost: String
    public let targetPort: Int

    private let listener: any Channel
    private let registry: Registry

    private init(listener: any Channel, port: Int, targetHost: String, targetPort: Int, registry: Registry) {
        self.listener = listener
        self.port = port
        self.targetHost = targetHost
        self.targetPort = targetPort
        self.registry = registry
    }

    /// Starts listening on an ephemeral loopback port and forwarding to `targetHost:targetPort`.
    public static func start(targetHost: String, targetPort: Int) async throws -> TCPProxy {
        let registry = Registry()
        let group = MultiThreadedEventLoopGroup.singleton
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { inbound in
                let connect = ClientBootstrap(group: inbound.eventLoop)
                    .channelOption(.autoRead, value: false)
                    .connect(host: targetHost, port: targetPort)
                return connect.flatMap { outbound in
                    inbound.eventLoop.makeCompletedFuture {
                        // A connection whose set-up ends after `shutdown()` began is cut, not
                        // forwarded: a client reconnecting while the proxy shuts down must not
                        // keep a link to the service.
                        guard registry.add(inbound, outbound) else {
                            inbound.close(promise: nil)
                            outbound.close(promise: nil)
                            return
                        }
                        let (left, right) = GlueHandler.matchedPair()
                        try inbound.pipeline.syncOperations.addHandler(left)
                        try outbound.pipeline.syncOperations.addHandler(right)
                        inbound.closeFuture.whenComplete { _ in registry.remove(inbound) }
                        outbound.closeFuture.whenComplete { _ in registry.remove(outbound) }
                        // Reading was held back until both sides were glued together.
                        try inbound.syncOptions?.setOption(.autoRead, value: true)
                        try outbound.syncOptions?.setOption(.autoRead, value: true)
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else {
            try await listener.close()
            throw ProxyError(message: "the proxy's listening socket has no port")
        }
        return TCPProxy(
            listener: listener,
            port: port,
            targetHost: targetHost,
            targetPort: targetPort,
            registry: registry
        )
    }

    /// How many proxied sockets (both sides counted) are open.
    public var openSocketCount: Int {
        registry.channels.count
    }

    /// Cuts every proxied connection now: both sides are closed, so the client sees its socket
    /// end as it would when the broker's host goes away.
    public func severAll() async {
        for channel in registry.channels {
            try? await channel.close().get()
        }
    }

    /// Stops forwarding on every proxied connection without closing it: both peers see a
    /// silent link, as with a dropped route, and must notice through their own heartbeats.
    public func pauseAll() async {
        for channel in registry.channels {
            try? await channel.setOption(.autoRead, value: false).get()
        }
    }

    /// Stops listening and cuts every connection, including one accepted while this runs.
    public func shutdown() async throws {
        registry.close()
        try? await listener.close().get()
        await severAll()
    }

    /// Cuts every connection and closes each new one at once, while keeping the port: a peer
    /// that reconnects finds a dead end, never another test's listener that took the port.
    public func refuseAll() async {
        registry.close()
        await severAll()
    }

    public struct ProxyError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }
}

/// Keeps the proxied channels, shared with the channel initialiser.
private final class Registry: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    var channels: [any Channel] { state.withLock { Array($0.channels.values) } }

    /// Registers both sides of a connection; false once the proxy shuts down.
    func add(_ inbound: any Channel, _ outbound: any Channel) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.channels[ObjectIdentifier(inbound)] = inbound
            state.channels[ObjectIdentifier(outbound)] = outbound
            return true
        }
    }

    func remove(_ channel: any Channel) {
        _ = state.withLock { $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// From now on ``add(_:_:)`` refuses.
    func close() {
        state.withLock { $0.closed = true }
    }
}
