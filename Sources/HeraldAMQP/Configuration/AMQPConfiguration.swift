import Foundation

/// How to reach a RabbitMQ broker and how the connection behaves.
///
/// Build it from a URL (``init(url:)``: `amqp://user:pass@host:port/vhost`, `amqps://…` for TLS)
/// and adjust the fields, or set every field yourself. It is a plain value: the `herald` executable
/// fills it from its configuration; libraries never read the environment.
///
/// `description` hides the password; print it freely.
public struct AMQPConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// Broker host name or address (the first node of a cluster).
    public var host: String
    /// Broker port; 5672 for `amqp`, 5671 for `amqps` by default.
    public var port: Int
    /// The cluster's other nodes, tried in turn after ``host``:``port`` when a connection is
    /// opened (so on every reconnect too): a RabbitMQ cluster without a load balancer in front.
    /// Same user, password, vhost and TLS settings for each.
    public var otherNodes: [AMQPNode] = []
    /// User name for SASL PLAIN.
    public var user: String
    /// Password for SASL PLAIN. Never printed.
    public var password: String
    /// Virtual host; `/` by default.
    public var virtualHost: String
    /// TLS settings; `nil` for plain TCP. Set by `amqps://` URLs.
    public var tls: AMQPTLSConfiguration?
    /// Heartbeat interval asked of the broker (it may lower it); `.zero` disables heartbeats.
    /// A peer silent for two intervals is declared dead (``AMQPError/Code/connectionLost``).
    public var heartbeat: Duration
    /// Shown by the broker (`rabbitmqctl list_connections name client_properties`, management UI)
    /// as the `connection_name` client property.
    public var connectionName: String?
    /// Largest frame size to negotiate, in bytes (the broker may lower it). 131072 by default.
    public var frameMax: Int
    /// Most channels to negotiate; 0 takes the broker's limit (2047 on RabbitMQ 3.10).
    public var channelMax: Int
    /// Bound on the TCP/TLS connect and on the AMQP handshake.
    public var connectTimeout: Duration
    /// Bound on each synchronous AMQP method (declare, bind, consume, get, close…). When it passes
    /// the connection is dropped: librabbitmq cannot resume after a lost reply.
    public var rpcTimeout: Duration
    /// Most publishes awaiting a broker confirm at a time (the pipelining window). Larger windows
    /// hide round trips; 1,000 reaches the broker's limit on a 2-core box.
    public var publishWindow: Int
    /// How long ``AMQPConnection/close()`` waits for outstanding publisher confirms before it
    /// closes anyway (the unconfirmed publishes then fail with ``AMQPError/Code/connectionClosed``).
    public var closeTimeout: Duration

    /// A configuration with defaults for a local broker (`guest`/`guest` on 127.0.0.1:5672, `/`).
    public init(
        host: String = "127.0.0.1",
        port: Int = 5672,
        user: String = "guest",
        password: String = "guest",
        virtualHost: String = "/",
        tls: AMQPTLSConfiguration? = nil,
        heartbeat: Duration = .seconds(30),
        connectionName: String? = nil,
        frameMax: Int = 131_072,
        channelMax: Int = 0,
        connectTimeout: Duration = .seconds(10),
        rpcTimeout: Duration = .seconds(30),
        publishWindow: Int = 1_000,
        closeTimeout: Duration = .seconds(5)
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.virtualHost = virtualHost
        self.tls = tls
        self.heartbeat = heartbeat
        self.connectionName = connectionName
        self.frameMax = frameMax
        self.channelMax = channelMax
        self.connectTimeout = connectTimeout
        self.rpcTimeout = rpcTimeout
        self.publishWindow = publishWindow
        self.closeTimeout = closeTimeout
    }

    /// Every node, in the order connections try them: ``host``:``port``, then ``otherNodes``.
    public var nodes: [AMQPNode] { [AMQPNode(host: host, port: port)] + otherNodes }

    /// The URL without its password, for logs: `amqp://guest@127.0.0.1:5672/%2F`.
    public var redactedURL: String {
        let scheme = tls == nil ? "amqp" : "amqps"
        let hosts = nodes.map(\.description).joined(separator: ",")
        return "\(scheme)://\(Self.percentEncode(user))@\(hosts)/\(Self.percentEncode(virtualHost))"
    }

    public var description: String {
        "AMQPConfiguration(\(redactedURL), heartbeat: \(heartbeat), connectionName: \(connectionName ?? "-"))"
    }

    /// Heartbeat in whole seconds as librabbitmq wants it (clamped to 0…65535).
    var heartbeatSeconds: Int32 {
        let seconds = heartbeat.components.seconds + (heartbeat.components.attoseconds > 0 ? 1 : 0)
        return Int32(clamping: min(max(seconds, 0), 65_535))
    }

    /// Percent-encodes a URL component (user, virtual host): everything but RFC 3986's
    /// unreserved characters, with Foundation's codec.
    static func percentEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlUnreserved) ?? text
    }
}

extension CharacterSet {
    /// RFC 3986's unreserved characters.
    static let urlUnreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
