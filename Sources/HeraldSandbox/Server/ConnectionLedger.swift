import Synchronization

/// What the ``HTTP2Server`` saw per TCP connection: requests served and the most streams open
/// at once, so tests can prove "1,000 requests over one connection" and "one connection carried
/// at least 100 concurrent streams".
///
/// Thread rules: `Sendable`; the server's event loop records, anyone reads ``snapshot()``.
public final class ConnectionLedger: Sendable {
    /// One accepted connection.
    public struct Connection: Sendable, Hashable {
        /// 1, 2, 3… in accept order; ``ServerRequest/connectionID`` refers to it.
        public var id: Int
        /// The negotiated protocol: `"h2"`, `"http/1.1"`, `"h2c"` (cleartext prior knowledge), or
        /// `nil` while (or if) TLS has not completed.
        public var applicationProtocol: String?
        /// Responses written on this connection.
        public var requestsServed: Int
        /// Streams open right now (HTTP/1.1: 1 while a request is being answered).
        public var openStreams: Int
        /// The most streams that were open at the same time.
        public var maxConcurrentStreams: Int
        /// False once the connection has closed.
        public var isOpen: Bool
    }

    /// A consistent copy of the ledger.
    public struct Snapshot: Sendable, Hashable {
        /// Every connection accepted so far, by id.
        public var connections: [Connection]

        /// Connections accepted so far (TLS failures included).
        public var connectionCount: Int { connections.count }
        /// Connections that completed the handshake and negotiated a protocol.
        public var establishedConnectionCount: Int { connections.filter { $0.applicationProtocol != nil }.count }
        public var openConnectionCount: Int { connections.filter(\.isOpen).count }
        /// Responses written over all connections.
        public var totalRequestsServed: Int { connections.reduce(0) { $0 + $1.requestsServed } }
        /// The most streams open at once on any one connection.
        public var maxConcurrentStreams: Int { connections.map(\.maxConcurrentStreams).max() ?? 0 }
    }

    private let state = Mutex<[Int: Connection]>([:])

    public init() {}

    public func snapshot() -> Snapshot {
        Snapshot(connections: state.withLock { $0.values.sorted { $0.id < $1.id } })
    }

    func opened(_ id: Int) {
        state.withLock {
            $0[id] = Connection(id: id, applicationProtocol: nil, requestsServed: 0, openStreams: 0, maxConcurrentStreams: 0, isOpen: true)
        }
    }

    func negotiated(_ id: Int, applicationProtocol: String) {
        state.withLock { $0[id]?.applicationProtocol = applicationProtocol }
    }

    func streamOpened(_ id: Int) {
        state.withLock { connections in
            guard var connection = connections[id] else { return }
            connection.openStreams += 1
            connection.maxConcurrentStreams = max(connection.maxConcurrentStreams, connection.openStreams)
            connections[id] = connection
        }
    }

    func streamClosed(_ id: Int) {
        state.withLock { connections in
            guard let open = connections[id]?.openStreams, open > 0 else { return }
            connections[id]?.openStreams = open - 1
        }
    }

    func served(_ id: Int) {
        state.withLock { $0[id]?.requestsServed += 1 }
    }

    func closed(_ id: Int) {
        state.withLock {
            $0[id]?.isOpen = false
            $0[id]?.openStreams = 0
        }
    }
}
