/// One broker node of a cluster: where a connection can be opened.
public struct AMQPNode: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, an IPv6 address in brackets.
    public var description: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}
