/// The routing algorithm of an exchange. Extensible: plugin types are `AMQPExchangeType("x-…")`.
public struct AMQPExchangeType: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Routes on an exact routing-key match. Herald's exchanges are direct.
    public static let direct = AMQPExchangeType("direct")
    /// Routes on routing-key patterns (`w1.*`, `#`).
    public static let topic = AMQPExchangeType("topic")
    /// Routes to every bound queue, ignoring the key.
    public static let fanout = AMQPExchangeType("fanout")
    /// Routes on header values.
    public static let headers = AMQPExchangeType("headers")
}
