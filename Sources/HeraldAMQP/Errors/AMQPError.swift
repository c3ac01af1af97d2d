import HeraldSupport

/// Every failure HeraldAMQP reports.
///
/// Why one struct: callers switch on ``code`` (an extensible set of static members, so adding a code
/// breaks nobody) and log the error whole. The context says which call failed (`call`: the
/// librabbitmq function or the AMQP method), librabbitmq's own status text (`amqp_error_string2`) or
/// the broker's reply code and text (e.g. `404 NOT_FOUND - no queue 'x'`).
///
/// `description` is safe for any log: it never contains passwords, message bodies or header
/// values. `debugDescription` adds the raw library status.
///
/// Which codes end the connection: ``Code/connectionFailed``, ``Code/authenticationFailed``,
/// ``Code/connectionLost``, ``Code/timeout`` and ``Code/protocolError`` mean the connection is gone
/// (make a new one with ``AMQPConnection/connect(_:logger:)``). ``Code/connectionClosed`` means it
/// was closed by ``AMQPConnection/close()``. The channel-level codes (``Code/notFound``,
/// ``Code/preconditionFailed``, ``Code/accessRefused``, ``Code/resourceLocked``,
/// ``Code/channelClosed``) leave the connection usable.
public struct AMQPError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<AMQPError>

    /// What went wrong.
    public var code: Code
    /// The librabbitmq function or AMQP method that failed, e.g. `amqp_queue_declare`.
    public var call: String
    /// librabbitmq's status text, the broker's reply text, or Herald's own explanation.
    public var message: String
    /// The broker's reply code (404, 406, 320…) when the broker closed a channel or the connection.
    public var replyCode: UInt16?
    /// The librabbitmq status (`AMQP_STATUS_*`, negative) when the library reported the failure.
    public var libraryStatus: Int32?
    /// The object concerned (a queue, exchange or host:port), when there is one.
    public var subject: String?
    /// For ``AMQPConnection/publishBatch(_:)``: the indices of the messages that were not confirmed
    /// (nacked, returned, or pending when the connection died). Empty otherwise.
    public var failedMessageIndices: [Int]

    public init(
        code: Code,
        call: String,
        message: String,
        replyCode: UInt16? = nil,
        libraryStatus: Int32? = nil,
        subject: String? = nil,
        failedMessageIndices: [Int] = []
    ) {
        self.code = code
        self.call = call
        self.message = message
        self.replyCode = replyCode
        self.libraryStatus = libraryStatus
        self.subject = subject
        self.failedMessageIndices = failedMessageIndices
    }

    /// True when the connection this error came from can no longer be used.
    public var endsConnection: Bool {
        [.connectionFailed, .authenticationFailed, .connectionLost, .connectionClosed, .timeout, .protocolError]
            .contains(code)
    }

    public var description: String {
        var text = "AMQPError.\(code) in \(call)"
        if let subject { text += " (\(subject))" }
        if let replyCode { text += ": \(replyCode)" }
        text += replyCode == nil ? ": \(message)" : " \(message)"
        if !failedMessageIndices.isEmpty { text += " [\(failedMessageIndices.count) message(s) not confirmed]" }
        return text
    }

    public var debugDescription: String {
        var text = "AMQPError(code: \(code), call: \(call), message: \(message)"
        if let replyCode { text += ", replyCode: \(replyCode)" }
        if let libraryStatus { text += ", libraryStatus: \(libraryStatus)" }
        if let subject { text += ", subject: \(subject)" }
        if !failedMessageIndices.isEmpty {
            let shown = failedMessageIndices.prefix(20).map(String.init).joined(separator: ",")
            text += ", failedMessageIndices: [\(shown)\(failedMessageIndices.count > 20 ? ",…" : "")]"
        }
        return text + ")"
    }
}

extension ErrorCode where Domain == AMQPError {
    /// TCP/TLS connect, the AMQP handshake or `connection.open` failed (not credentials).
    public static let connectionFailed = Self("connectionFailed")
    /// The broker refused the user name or password (403 ACCESS_REFUSED during login).
    public static let authenticationFailed = Self("authenticationFailed")
    /// The connection died: socket closed or failed, heartbeat missed, or the broker closed it
    /// (`connection.close`, e.g. 320 CONNECTION_FORCED). Everything pending on it failed.
    public static let connectionLost = Self("connectionLost")
    /// The connection was closed by ``AMQPConnection/close()`` before the call could run.
    public static let connectionClosed = Self("connectionClosed")
    /// The broker closed a channel for a reason without its own code here; see `replyCode`.
    public static let channelClosed = Self("channelClosed")
    /// 404 NOT_FOUND: the queue or exchange does not exist.
    public static let notFound = Self("notFound")
    /// 406 PRECONDITION_FAILED, e.g. a queue declared with other arguments than it has.
    public static let preconditionFailed = Self("preconditionFailed")
    /// 403 ACCESS_REFUSED on a channel operation (permissions, reserved `amq.` names).
    public static let accessRefused = Self("accessRefused")
    /// 405 RESOURCE_LOCKED: an exclusive queue of another connection, or an exclusive consumer.
    public static let resourceLocked = Self("resourceLocked")
    /// The broker answered a publish with `basic.nack`: it did not take responsibility for it.
    public static let publishNacked = Self("publishNacked")
    /// A `mandatory` publish could not be routed to any queue (`basic.return`, 312 NO_ROUTE).
    public static let unroutable = Self("unroutable")
    /// The broker cancelled a consumer (its queue was deleted, or it failed over).
    public static let consumerCancelled = Self("consumerCancelled")
    /// A call or the handshake took longer than its configured timeout.
    public static let timeout = Self("timeout")
    /// The AMQP URL could not be parsed.
    public static let invalidURL = Self("invalidURL")
    /// An argument was out of range (prefetch 0, an empty queue name where one is required…).
    public static let invalidArgument = Self("invalidArgument")
    /// The broker or the library saw a frame it did not expect; the connection was dropped.
    public static let protocolError = Self("protocolError")
    /// TLS setup failed (certificate files, verification).
    public static let tlsFailed = Self("tlsFailed")
}
